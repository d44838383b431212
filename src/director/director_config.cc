#include "director/director_config.h"

namespace vsc::director {

void DirectorConfig::Bind(ConfigTable& t) {
  t.Bind("listen", &listen, "address of the virtual services (VIP)");
  t.Bind("lookup_port", &lookup_port, "lookup service port, UDP (dr) and TCP (proxied)");
  t.Bind("control_port", &control_port, "TCP port for real-server control sessions");
  t.Bind("heartbeat_port", &heartbeat_port, "UDP port for real-server heartbeats");
  t.Bind("admin_listen", &admin_listen, "address of the admin API (keep it on loopback)");
  t.Bind("admin_port", &admin_port, "HTTP admin API and /metrics port");
  t.Bind("admin_token_file", &admin_token_file,
         "file holding the admin bearer token; written with a new token if absent");
  t.Bind("key_file", &key_file, "cluster key file (mode 0600); else $VSC_CLUSTER_KEY");
  t.Bind("insecure", &insecure, "run without a cluster key: anyone on the network can register");
  t.Bind("workers", &workers, "data-plane worker threads (0 = one per core)");
  t.Bind("scheduler", &scheduler, "rr wrr sh lc wlc sed nq ll mh dwlc");
  t.Bind("persistence_timeout_s", &persistence_timeout_s,
         "persistence timeout in seconds, 0 = off (ipvsadm -p)");
  t.Bind("persistence_netmask", &persistence_netmask, "persistence granularity (ipvsadm -M)");
  t.Bind("heartbeat_interval_ms", &heartbeat_interval_ms, "real-server heartbeat period");
  t.Bind("silent_after", &silent_after, "missed heartbeats before a server gets no new work");
  t.Bind("down_after", &down_after, "missed heartbeats before a server is DOWN");
  t.Bind("mh_table_size", &mh_table_size, "Maglev table size (prime)");
  t.Bind("dwlc_reference_ms", &dwlc_reference_ms, "dwlc: weight = reference - response time");
  t.Bind("max_servers", &max_servers, "most real servers the director tracks");
  t.Bind("log_level", &log_level, "trace debug info warn error off");
  t.Bind("ready_file", &ready_file,
         "write the bound ports here as JSON once serving (for scripts and tests)");
}

}  // namespace vsc::director

#include "realserver/realserver_config.h"

namespace vsc::realserver {

void RealServerConfig::Bind(ConfigTable& t) {
  t.Bind("id", &id, "unique name of this real server in the cluster (required)");
  t.Bind("director", &director,
         "director host (HOST:PORT also accepted: the control port); repeat it (a list in TOML) "
         "for an active director and its standbys: the server registers with whichever accepts "
         "it");
  t.Bind("control_port", &control_port, "the director's control_port");
  t.Bind("listen", &listen, "address (IPv4 or IPv6) the services bind and register");
  t.Bind("lookup_port", &lookup_port, "lookup service port, UDP and TCP (0 = any free port)");
  t.Bind("http_port", &http_port,
         "HTTP port: lookups, and GET /v1/snapshot for peers (0 = any free port)");
  t.Bind("sql_port", &sql_port, "SQL read port, UDP, registered as sql-udp (0 = any free port)");
  t.Bind("db", &db,
         "resource database file (SQLite, built by vsc loaddb); this server's replica, written "
         "only by replication; it must exist unless create_db is set, and belongs to this "
         "server alone (a lock file <db>.vsc-lock keeps a second server off it)");
  t.Bind("create_db", &create_db,
         "create db empty when it does not exist; the director then has a peer's snapshot "
         "copied into it before the server serves");
  t.Bind("synchronous", &synchronous,
         "replica writer's PRAGMA synchronous: NORMAL (WAL, durable at checkpoint) or FULL "
         "(durable at every commit)");
  t.Bind("apply_batch", &apply_batch,
         "replicated entries applied in one transaction at most (everything queued, up to this)");
  t.Bind("apply_interval_ms", &apply_interval_ms,
         "replica transactions start at least this many ms apart: entries arriving meanwhile "
         "join the next one (fewer commits, acks and reader cache resets under a steady update "
         "flow, at most this much added write latency; an idle replica applies at once); 0 "
         "applies every batch at once");
  t.Bind("snapshot_timeout_ms", &snapshot_timeout_ms,
         "snapshot fetch from a peer: bound on the connect and on each stalled read");
  t.Bind("weight", &weight, "scheduling weight registered with the director (0-65535)");
  t.Bind("workers", &workers, "service threads");
  t.Bind("key_file", &key_file, "cluster key file (mode 0600); else $VSC_CLUSTER_KEY");
  t.Bind("insecure", &insecure, "run without a cluster key (testing only)");
  t.Bind("trusted_forwarders", &trusted_forwarders,
         "IPv4 or IPv6 addresses allowed to send forward headers, comma-separated (default: the "
         "director's address)");
  t.Bind("log_level", &log_level, "trace debug info warn error off");
  t.Bind("ready_file", &ready_file,
         "write the bound ports here as JSON once serving (for scripts and tests)");
  t.Bind("service", &service,
         "a local service to front, NAME=tcp:HOST:PORT or NAME=udp:HOST:PORT (e.g. "
         "web=tcp:10.0.0.5:80): registered with the director, where a destination at HOST:PORT "
         "follows this server's state and load");
  t.Bind("load_cgroup", &load_cgroup,
         "report the run-queue length of this cgroup directory (its runnable tasks and its "
         "descendants', v1 or v2) instead of the node's /proc/loadavg: for real servers in "
         "containers, which all see their host's loadavg");
  t.Bind("relay", &relay,
         "serve the clip relay and join the director's ring (capability and endpoint 'relay')");
  t.Bind("relay_port", &relay_port, "clip relay port, TCP (0 = any free port)");
  t.Bind("relay_max_connections", &relay_max_connections,
         "clip relay connections at most, clients and peers; more are refused");
  t.Bind("relay_rate", &relay_rate,
         "clip relay requests per second per client connection (0 = "
         "unlimited); bursts of a quarter second are allowed");
  t.Bind("relay_max_groups", &relay_max_groups, "groups this node holds at most");
  t.Bind("relay_max_subscribers", &relay_max_subscribers, "subscribers per group at most");
  t.Bind("relay_buffer_clips", &relay_buffer_clips, "clips kept per group (older are dropped)");
  t.Bind("relay_buffer_bytes", &relay_buffer_bytes, "bytes of clips kept per group");
}

std::vector<std::string> RealServerConfig::DirectorAddresses() const {
  std::vector<std::string> out;
  for (const std::string& d : director) {
    out.push_back(d.find(':') != std::string::npos ? d : d + ":" + std::to_string(control_port));
  }
  return out;
}

}  // namespace vsc::realserver

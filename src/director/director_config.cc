#include "director/director_config.h"

#include <filesystem>

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
  t.Bind("nat_connect_timeout_ms", &nat_connect_timeout_ms,
         "nat: connect timeout to a destination; a failed connect goes to another one");
  t.Bind("tcp_timeout_s", &tcp_timeout_s,
         "TCP nat: an open connection is closed after this long without a byte either way "
         "(ipvsadm --set tcp)");
  t.Bind("tcpfin_timeout_s", &tcpfin_timeout_s,
         "TCP nat: once one side has closed its half, the rest is closed after this long "
         "without a byte (ipvsadm --set tcpfin; HAProxy's timeout client-fin)");
  t.Bind("udp_session_timeout_s", &udp_session_timeout_s,
         "UDP nat: a session ends after this long without a datagram (ipvsadm --set udp)");
  t.Bind("expire_nodest_conn", &expire_nodest_conn,
         "nat: close the open connections and UDP sessions of a destination when it is removed "
         "(LVS sysctl; false = they go on to the old address until they end)");
  t.Bind("expire_quiescent_template", &expire_quiescent_template,
         "persistence: a known client of a weight-0 destination is scheduled anew (LVS sysctl; "
         "false = it keeps going to its destination)");
  t.Bind("ring_port", &ring_port,
         "TCP port for ring clients: the route table, the owner of a key, and via-director "
         "clip relay requests (docs/protocol.md \"Clip relay\")");
  t.Bind("services_file", &services_file,
         "the running virtual-service table, saved on every change and restored at start-up "
         "(wins over the [[service]] tables; SIGHUP reloads those); empty = beside log_file");
  t.IgnoreTables("service");
  t.Bind("write_port", &write_port, "TCP port for writers (replicated writes)");
  t.Bind("sql_port", &sql_port, "UDP port for SQL reads, forwarded to a replica (dr)");
  t.Bind("log_file", &log_file,
         "replication log (SQLite); replication runs when it exists or schema_db is set");
  t.Bind("schema_db", &schema_db,
         "bootstrap database whose schema and content define seq 0 (needed for a new log)");
  t.Bind("commit_policy", &commit_policy, "when a write is answered: all, majority, one");
  t.Bind("replica_window_entries", &replica_window_entries,
         "entries in flight to one replica before it is BUSY");
  t.Bind("replica_window_bytes", &replica_window_bytes,
         "payload bytes in flight to one replica before it is BUSY");
  t.Bind("update_queue", &update_queue,
         "writes waiting to be sequenced or committed; more are refused (overloaded)");
  t.Bind("update_queue_bytes", &update_queue_bytes,
         "bytes of SQL and parameters those writes may hold; more are refused (overloaded)");
  t.Bind("request_queue", &request_queue,
         "reads waiting for an eligible replica; more are refused (overloaded)");
  t.Bind("read_timeout_ms", &read_timeout_ms, "how long a held read waits for a replica");
  t.Bind("read_stall_timeout_ms", &read_stall_timeout_ms,
         "HTTP API reads: how long the chosen replica may take for its first page, and again for "
         "each next one, before the read goes to another replica");
  t.Bind("http_listen", &http_listen, "address of the rqlite-compatible HTTP API");
  t.Bind("http_port", &http_port, "port of the rqlite-compatible HTTP API (/db/execute...)");
  t.Bind("http_auth", &http_auth,
         "rqlite users file (basic auth, per-user perms); required off loopback");
  t.Bind("http_cert", &http_cert,
         "PEM certificate chain for HTTPS on http_port (with http_key); empty = plain HTTP");
  t.Bind("http_key", &http_key, "PEM private key of http_cert (unencrypted)");
  t.Bind("http_max_body", &http_max_body, "largest HTTP API request body in bytes (413 past)");
  t.Bind("http_request_timeout_ms", &http_request_timeout_ms,
         "an HTTP API request must arrive whole within this (slow clients are closed)");
  t.Bind("max_result_rows", &max_result_rows, "most rows one HTTP API query may return");
  t.Bind("max_result_bytes", &max_result_bytes, "most bytes one HTTP API query result may hold");
  t.Bind("log_retain_entries", &log_retain_entries,
         "entries the log keeps for catch-up; older ones need a snapshot");
  t.Bind("log_retain_bytes", &log_retain_bytes, "payload bytes the log keeps for catch-up");
  t.Bind("etcd_endpoints", &etcd_endpoints,
         "etcd client URLs (http://HOST:PORT); set: writes are sequenced only while this director "
         "holds the etcd lease on /vscluster/<cluster_name>/sequencer (director standby)");
  t.Bind("cluster_name", &cluster_name, "names this cluster's keys in etcd: /vscluster/<name>/");
  t.Bind("sequencer_lease_ttl_ms", &sequencer_lease_ttl_ms,
         "TTL of the sequencer lease: a director that cannot renew it for this long stops "
         "sequencing, and another one may take over (etcd counts whole seconds)");
  t.Bind("etcd_timeout_ms", &etcd_timeout_ms,
         "bound on one etcd request, per endpoint (at most a third of sequencer_lease_ttl_ms)");
  t.Bind("promotion_wait_ms", &promotion_wait_ms,
         "after taking the sequencer lease, how long the director waits for the replicas to "
         "register before it resumes the log at the highest position they report");
  t.Bind("floating_vip", &floating_vip,
         "listen is a VIP that keepalived moves between the director hosts: a standby that "
         "receives a real server's registration on it holds the VIP, so it accepts the server "
         "and serves lookups before it holds the sequencer lease (writes still wait for it)");
  t.Bind("sync_peers", &sync_peers,
         "HOST:PORT of each other director's sync port: persistence templates and UDP nat "
         "sessions are sent there (and taken from there), so a standby keeps those clients on "
         "their servers after a failover (LVS's sync daemon); empty = no state sync");
  t.Bind("sync_listen", &sync_listen, "address of this director's state sync socket (UDP)");
  t.Bind("sync_port", &sync_port, "UDP port of the state sync socket; bound only with sync_peers");
  t.Bind("service_table_poll_ms", &service_table_poll_ms,
         "with etcd_endpoints: the director watches the service table kept in etcd "
         "(/vscluster/<cluster_name>/services) and applies a newer one as it changes; while the "
         "watch cannot be kept (etcd unreachable, compacted) or the key is absent, how often it "
         "reads the table instead");
}

std::string ServicesFilePath(const DirectorConfig& c) {
  if (!c.services_file.empty()) return c.services_file;
  return (std::filesystem::path(c.log_file).parent_path() / "director-services.toml").string();
}

}  // namespace vsc::director

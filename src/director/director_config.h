// The director's configuration: every key has a default, a TOML key under [director] and a flag
// (`vsc director --print-config` shows them all).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/config.h"
#include "vservice/virtual_service_table.h"

namespace vsc::director {

struct DirectorConfig {
  std::string listen = "127.0.0.1";  // address of the virtual services (the VIP)
  uint16_t lookup_port = 7000;       // lookup service, UDP (dr) and TCP (proxied), same port
  uint16_t control_port = 7100;      // TCP: real-server control sessions (registration)
  uint16_t heartbeat_port = 7101;    // UDP: real-server heartbeats
  std::string admin_listen = "127.0.0.1";
  uint16_t admin_port = 7200;          // HTTP admin API and /metrics
  std::string admin_token_file;        // bearer token for the admin API; empty = generated
  std::string key_file;                // cluster key file (else env VSC_CLUSTER_KEY)
  bool insecure = false;               // run without a cluster key (testing only)
  uint32_t workers = 0;                // data-plane threads; 0 = number of cores
  std::string scheduler = "wlc";       // ipvsadm's default
  uint32_t persistence_timeout_s = 0;  // 0 = no persistence (ipvsadm -p)
  std::string persistence_netmask = "255.255.255.255";  // ipvsadm -M
  uint32_t heartbeat_interval_ms = 200;
  uint32_t silent_after = 2;  // missed heartbeats before SILENT (no new work)
  uint32_t down_after = 5;    // missed heartbeats before DOWN
  uint32_t mh_table_size = 65537;
  double dwlc_reference_ms = 700;
  uint32_t max_servers = 1024;
  std::string log_level = "info";
  std::string ready_file;     // written with the bound ports once serving
  uint16_t ring_port = 7400;  // TCP: ring table, owner and via-director relay requests
  // The running virtual-service table, saved after every change and restored at start-up;
  // empty = director-services.toml beside log_file.
  std::string services_file;

  // Replication (DESIGN §7). Runs when schema_db is set or log_file exists already.
  uint16_t write_port = 7300;                // TCP: writers (WriteRequest -> WriteResponse)
  uint16_t sql_port = 7301;                  // UDP: SQL reads, forwarded to a replica (dr)
  std::string log_file = "director-log.db";  // the durable replication log (SQLite)
  std::string schema_db;                     // bootstrap database: schema and content at seq 0
  std::string commit_policy = "all";         // all, majority, one
  uint32_t replica_window_entries = 1024;    // in-flight entries per replica before BUSY
  int64_t replica_window_bytes = 4 << 20;    // in-flight payload bytes per replica
  uint32_t update_queue = 10000;             // writes waiting to be sequenced or decided
  int64_t update_queue_bytes = 256ll << 20;  // their SQL and parameter bytes
  uint32_t request_queue = 10000;            // reads waiting for an eligible replica
  uint32_t read_timeout_ms = 2000;           // how long a held read waits
  uint32_t read_stall_timeout_ms = 10000;    // a streaming replica's longest pause (HTTP API)
  uint32_t log_retain_entries = 1000000;
  int64_t log_retain_bytes = 256ll << 20;

  // Director standby (issue 11): with etcd_endpoints set, writes are sequenced only while this
  // director holds the etcd lease on /vscluster/<cluster_name>/sequencer (sequencer_lease.h).
  std::vector<std::string> etcd_endpoints;  // "http://127.0.0.1:2379", ...; empty = no etcd
  std::string cluster_name = "vsc";
  uint32_t sequencer_lease_ttl_ms = 3000;  // etcd grants whole seconds (rounded up), 2 s at least
  uint32_t etcd_timeout_ms = 1000;         // one etcd request; at most a third of the TTL
  uint32_t promotion_wait_ms = 1000;       // after taking the lease: time for replicas to register
  // `listen` is a VIP keepalived moves between the director hosts: a registration reaching this
  // director's control port found the VIP here, so a standby accepts it (lookups only; replicas
  // wait for the lease) instead of refusing it (ControlServer::SetStandby).
  bool floating_vip = false;
  // State sync (LVS's sync daemon): persistence templates and UDP nat sessions sent to the other
  // directors' sync ports, so a standby that takes over keeps those clients where they were.
  std::vector<std::string> sync_peers;  // "HOST:PORT" of each peer; empty = no sync socket
  std::string sync_listen = "127.0.0.1";
  uint16_t sync_port = 7102;  // UDP; bound only with sync_peers
  // How often every director reads the service table's key /vscluster/<cluster_name>/services
  // (service_table_watch.h).
  uint32_t service_table_poll_ms = 200;

  // Virtual services (issue 12). `services`: the table to start with (filled from TOML
  // [[service]] by the loader), beside the built-in lookup entries; not a flag.
  std::optional<vservice::VirtualServiceTable> services;
  uint32_t nat_connect_timeout_ms = 2000;  // nat: a connect slower than this is redispatched
  // ipvsadm --set tcp tcpfin udp at start-up (net/flow_timeouts.h); `vsc adm --set` changes
  // them at run time.
  uint32_t tcp_timeout_s = 900;          // an open nat connection without traffic
  uint32_t tcpfin_timeout_s = 120;       // a half-closed one
  uint32_t udp_session_timeout_s = 300;  // UDP nat sessions
  // LVS's sysctls of these names (flow_expiry.h, persistence.h): close the flows to a removed
  // destination; stop sending known persistent clients to a quiescent (weight 0) one.
  bool expire_nodest_conn = false;
  bool expire_quiescent_template = false;
  // The rqlite-compatible HTTP API (DESIGN §9a), served with or without replication.
  std::string http_listen = "127.0.0.1";
  uint16_t http_port = 4001;  // rqlite's own default, so its clients find it
  std::string http_auth;      // rqlite users file; required when http_listen is not loopback
  // Both set: the HTTP API speaks HTTPS only, with this PEM certificate chain and key (rqlite's
  // -http-cert / -http-key).
  std::string http_cert;
  std::string http_key;
  int64_t http_max_body = 16ll << 20;  // request body bytes; more is 413 (a 4 MiB blob as hex fits)
  uint32_t http_request_timeout_ms = 10000;  // a request must arrive whole within this
  uint32_t max_result_rows = 1000000;        // rows of one query result; more is an error
  int64_t max_result_bytes = 128ll << 20;    // encoded bytes of one query result

  // Registers every field on `table` (section "director"); the [[service]] tables of the same
  // file are left to LoadServicesToml (service_store.h).
  void Bind(ConfigTable& table);
};

// services_file, or director-services.toml in log_file's directory.
std::string ServicesFilePath(const DirectorConfig& config);

}  // namespace vsc::director

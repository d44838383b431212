// The director's configuration: every key has a default, a TOML key under [director] and a flag
// (`vsc director --print-config` shows them all).
#pragma once

#include <cstdint>
#include <string>

#include "common/config.h"

namespace vsc::director {

struct DirectorConfig {
  std::string listen = "127.0.0.1";   // address of the virtual services (the VIP)
  uint16_t lookup_port = 7000;        // lookup service, UDP (dr) and TCP (proxied), same port
  uint16_t control_port = 7100;       // TCP: real-server control sessions (registration)
  uint16_t heartbeat_port = 7101;     // UDP: real-server heartbeats
  std::string admin_listen = "127.0.0.1";
  uint16_t admin_port = 7200;         // HTTP admin API and /metrics
  std::string admin_token_file;       // bearer token for the admin API; empty = generated
  std::string key_file;               // cluster key file (else env VSC_CLUSTER_KEY)
  bool insecure = false;              // run without a cluster key (testing only)
  uint32_t workers = 0;               // data-plane threads; 0 = number of cores
  std::string scheduler = "wlc";      // ipvsadm's default
  uint32_t persistence_timeout_s = 0; // 0 = no persistence (ipvsadm -p)
  std::string persistence_netmask = "255.255.255.255";  // ipvsadm -M
  uint32_t heartbeat_interval_ms = 200;
  uint32_t silent_after = 2;          // missed heartbeats before SILENT (no new work)
  uint32_t down_after = 5;            // missed heartbeats before DOWN
  uint32_t mh_table_size = 65537;
  double dwlc_reference_ms = 700;
  uint32_t max_servers = 1024;
  std::string log_level = "info";
  std::string ready_file;             // written with the bound ports once serving

  // Registers every field on `table` (section "director").
  void Bind(ConfigTable& table);
};

}  // namespace vsc::director

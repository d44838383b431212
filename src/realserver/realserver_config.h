// A real server's configuration: every key has a default, a TOML key under [realserver] and a
// flag (`vsc realserver --print-config`).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/config.h"

namespace vsc::realserver {

struct RealServerConfig {
  std::string id;  // unique name in the cluster (required)
  // Director hosts (HOST:PORT names the port): the active director and its standbys, tried in
  // turn until one accepts the registration (agent.h).
  std::vector<std::string> director = {"127.0.0.1"};
  uint16_t control_port = 7100;          // the director's control_port
  std::string listen = "127.0.0.1";      // address the services bind and register
  uint16_t lookup_port = 0;              // lookup service, UDP and TCP (0 = any free port)
  uint16_t http_port = 0;                // HTTP lookups, /v1/snapshot (0 = any free port)
  uint16_t sql_port = 0;                 // SQL reads over UDP, "sql-udp" (0 = any free port)
  std::string db = "resources.db";       // resource database (SQLite), this server's replica
  bool create_db = false;                // a missing db is created empty (a snapshot fills it)
  std::string synchronous = "NORMAL";    // replica writer: NORMAL (durable at checkpoint) or FULL
  uint32_t apply_batch = 4096;           // replicated entries applied per transaction at most
  uint32_t apply_interval_ms = 0;        // replica transactions start at least this far apart (ms)
  uint32_t snapshot_timeout_ms = 30000;  // snapshot fetch: connect and per-read stall bound
  uint32_t weight = 1;
  uint32_t workers = 1;  // service threads
  std::string key_file;  // cluster key file (else env VSC_CLUSTER_KEY)
  bool insecure = false;
  std::string trusted_forwarders;  // comma-separated IPv4/IPv6 addresses allowed to send forward
                                   // headers; empty = the director's address
  std::string log_level = "info";
  std::string ready_file;  // written with the bound ports once serving
  // Local services fronted without being implemented: "NAME=tcp:HOST:PORT" (fronted_service.h).
  std::vector<std::string> service;
  // Run-queue length from this cgroup's tasks instead of /proc/loadavg (run_queue.h).
  std::string load_cgroup;
  // The clip relay (DESIGN.md §8): a ring member when `relay` is set.
  bool relay = false;
  uint16_t relay_port = 0;  // TCP, registered as "relay" (0 = any free port)
  uint32_t relay_max_connections = 20000;
  uint32_t relay_rate = 2000;  // requests per second per client connection (0 = any)
  uint32_t relay_max_groups = 100000;
  uint32_t relay_max_subscribers = 10000;  // per group
  uint32_t relay_buffer_clips = 1024;      // per group
  uint32_t relay_buffer_bytes = 8388608;   // per group

  void Bind(ConfigTable& table);
  // "HOST:PORT" of each director's control port: a `director` entry with `control_port` unless
  // the entry carries a port itself.
  std::vector<std::string> DirectorAddresses() const;
};

}  // namespace vsc::realserver

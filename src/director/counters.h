// Data-plane counters. Each worker owns one WorkerCounters and is its only writer; the control
// thread reads them and sums over workers for `adm list --stats` and /metrics.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "common/counter.h"
#include "director/cluster_view.h"

namespace vsc::director {

using vsc::Counter;

// Per real server (indexed by its slot), the columns of `ipvsadm -L --stats`.
struct ServerCounters {
  Counter conns;      // UDP requests forwarded + TCP connections scheduled
  Counter in_packets;
  Counter in_bytes;
  Counter out_packets;  // TCP proxy only; in dr mode replies bypass the director
  Counter out_bytes;
  Counter active;       // TCP connections open through the proxy now
};

// Per virtual service.
struct ServiceCounters {
  Counter conns;
  Counter in_packets;
  Counter in_bytes;
  Counter out_packets;
  Counter out_bytes;
};

struct WorkerCounters {
  explicit WorkerCounters(size_t max_servers)
      : servers{std::vector<ServerCounters>(max_servers), std::vector<ServerCounters>(max_servers)} {}
  // UDP lookup service
  Counter rx_datagrams;
  Counter forwarded;
  Counter dropped_malformed;   // not a lookup request (bad magic, length, count...)
  Counter dropped_no_server;   // no real server available
  Counter dropped_too_large;   // no room for the forward header
  // TCP lookup service
  Counter tcp_accepted;
  Counter tcp_no_server;
  Counter tcp_connect_failed;
  // Indexed by service (kUdpService, kTcpService), then by server slot.
  ServiceCounters services[2];
  std::vector<ServerCounters> servers[2];
};

}  // namespace vsc::director

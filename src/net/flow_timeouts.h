// FlowTimeouts: the director's connection timeouts, ipvsadm's `--set tcp tcpfin udp` (shared/
// reference/virtual_services.md §1.3), read by every open flow and changed at run time.
//
//   tcp     a proxied TCP connection in which neither direction has ended is closed after this
//           long without a byte either way (LVS: ESTABLISHED, default 900 s);
//   tcpfin  once one direction has ended (half-closed: a FIN came from one side), the rest of
//           the connection is closed after this long without a byte (LVS: FIN_WAIT, 120 s;
//           HAProxy's `timeout client-fin` / `server-fin`);
//   udp     a UDP nat session ends after this long without a datagram either way (300 s).
//
// As in the kernel, a new value applies to the flows already open, at their next check (a TCP
// proxy looks every quarter of its timeout; a UDP session at its next datagram or expiry tick).
// Set() keeps a value given as zero, as `ipvsadm --set` does. Thread safe: relaxed atomics,
// written on the control thread, read by the workers.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

#include "common/clock.h"

namespace vsc::net {

struct FlowTimeoutValues {
  Duration tcp = std::chrono::seconds(900);
  Duration tcpfin = std::chrono::seconds(120);
  Duration udp = std::chrono::seconds(300);
  friend bool operator==(const FlowTimeoutValues&, const FlowTimeoutValues&) = default;
};

class FlowTimeouts {
 public:
  explicit FlowTimeouts(const FlowTimeoutValues& v = {}) { Set(v); }
  FlowTimeouts(const FlowTimeouts&) = delete;
  FlowTimeouts& operator=(const FlowTimeouts&) = delete;

  // A zero (or negative) value keeps the current one.
  void Set(const FlowTimeoutValues& v) {
    Store(tcp_ms_, v.tcp);
    Store(tcpfin_ms_, v.tcpfin);
    Store(udp_ms_, v.udp);
  }
  FlowTimeoutValues Get() const { return {tcp(), tcpfin(), udp()}; }
  Duration tcp() const { return Load(tcp_ms_); }
  Duration tcpfin() const { return Load(tcpfin_ms_); }
  Duration udp() const { return Load(udp_ms_); }

 private:
  static void Store(std::atomic<int64_t>& to, Duration d) {
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
    if (ms > 0) to.store(ms, std::memory_order_relaxed);
  }
  static Duration Load(const std::atomic<int64_t>& from) {
    return std::chrono::milliseconds(from.load(std::memory_order_relaxed));
  }

  std::atomic<int64_t> tcp_ms_{0};
  std::atomic<int64_t> tcpfin_ms_{0};
  std::atomic<int64_t> udp_ms_{0};
};

}  // namespace vsc::net

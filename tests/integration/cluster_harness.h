// Test harness for the integration tests: a whole cluster (director + 3 real servers as child
// processes of the `vsc` binary, via bench::LocalCluster) on 127.0.0.1, plus the small tools the
// tests need around it: the resource database and its expected answers (built once per test
// binary), a raw UDP socket that reports the sender's port (to see who answered in `dr` mode), a
// paced UDP load that records every request's fate, Prometheus text parsing and polling with a
// deadline.
//
// Everything here runs on the test's thread except PacedUdpLoad, which owns one thread of its own
// between Start and Stop. Children are stopped by the fixture's TearDown (and die with the test
// process anyway: PR_SET_PDEATHSIG).
#pragma once

#include <gtest/gtest.h>
#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "bench/local_cluster.h"
#include "common/clock.h"
#include "common/status.h"
#include "common/unique_fd.h"
#include "integration/vsc_process.h"
#include "proto/lookup_codec.h"
#include "support/wait_until.h"

#ifndef VSC_BINARY
#error "VSC_BINARY must name the vsc executable (set by tests/integration/CMakeLists.txt)"
#endif

namespace vsc::integration {

// Shape of the shared resource database.
inline constexpr uint64_t kRecords = 20000;
inline constexpr uint32_t kNodes = 8;

// The expected answer for any id, read once from the database the servers serve.
class Oracle {
 public:
  explicit Oracle(std::vector<std::string> nodes) : nodes_(std::move(nodes)) {}
  // Found with its node for 1..kRecords, not found otherwise.
  proto::LookupAnswer Expect(uint64_t id) const;
  // True when `answers` are exactly the expected answers of `ids`, in order.
  bool Matches(std::span<const uint64_t> ids,
               const std::vector<proto::LookupAnswer>& answers) const;

 private:
  std::vector<std::string> nodes_;  // index = id; [0] unused
};

// Builds the database (once per process) under a fresh temporary directory; returns its path.
const std::string& SharedDbPath();
const Oracle& SharedOracle();

// A fresh directory under $TMPDIR (or /tmp), created with mkdtemp.
std::string MakeTempDir(const std::string& prefix);

using test_support::WaitUntil;  // support/wait_until.h

// Whether every thread of process `pid` is stopped ('T' in /proc/PID/task/*/stat). SIGSTOP
// reaches a multi-threaded process through one thread, which stops the others only when it next
// runs; on a loaded machine the others can run on for tens of milliseconds (and ack a write, say)
// after kill() returned. Poll this with WaitUntil after sending SIGSTOP.
bool AllThreadsStopped(pid_t pid);

// Prometheus text: the value of the series written exactly as `series` (name plus labels in the
// exporter's order, e.g. `vsc_control_dropped_total{reason="replayed"}`); NotFound if absent.
Result<double> MetricValue(const std::string& metrics_text, const std::string& series);

// /v1/status helpers. `service` is 0 (UDP, Route) or 1 (TCP, Masq).
const nlohmann::json* FindServer(const nlohmann::json& status, int service, const std::string& id);
// stats.conns of that server, or 0 when unlisted.
uint64_t ServerConns(const nlohmann::json& status, int service, const std::string& id);

// GET http://127.0.0.1:port/target with a bearer token; returns (HTTP status, body). Unlike
// net::HttpRequestSync it ends the connection with a reset (SO_LINGER 0), so polling the admin
// API hundreds of times leaves no TIME_WAIT sockets behind: those hold ephemeral port numbers
// that the daemons' port-0 UDP+TCP binding can then clash with (see the integration report).
Result<std::pair<int, std::string>> AdminHttpGet(uint16_t port, const std::string& target,
                                                 const std::string& token, Duration timeout);

// Encodes a lookup request.
std::vector<uint8_t> EncodeLookup(uint64_t request_id, std::span<const uint64_t> ids);

// An unconnected UDP socket bound to 127.0.0.1:0 that reports who answered.
class UdpProbe {
 public:
  // Bound to 127.0.0.1, or to ::1 with `ipv6`; it sends to the same loopback address.
  static Result<UdpProbe> Open(bool ipv6 = false);
  Status SendTo(uint16_t port, std::span<const uint8_t> bytes);
  struct Datagram {
    std::vector<uint8_t> bytes;
    uint16_t from_port = 0;
  };
  // The next datagram, or nullopt when none arrives within `timeout`.
  std::optional<Datagram> Receive(Duration timeout);
  // The next decodable lookup answer carrying `request_id` (other datagrams are skipped), or
  // nullopt when none arrives within `timeout`.
  std::optional<Datagram> ReceiveAnswerTo(uint64_t request_id, Duration timeout);
  uint16_t local_port() const { return local_port_; }
  int fd() const { return fd_.get(); }

 private:
  UdpProbe(UniqueFd fd, uint16_t port, bool ipv6)
      : fd_(std::move(fd)), local_port_(port), ipv6_(ipv6) {}
  UniqueFd fd_;
  uint16_t local_port_ = 0;
  bool ipv6_ = false;
};

// Sends one lookup request (2 random ids out of 1..kRecords+5000) every `interval` to
// 127.0.0.1:port from one socket, on its own thread, and records when each was sent and whether,
// when, from which port and how correctly it was answered. Answers are matched by request_id, so
// late answers still count. Not restartable: Start once, Stop once, then read records().
class PacedUdpLoad {
 public:
  struct Record {
    uint64_t request_id = 0;
    TimePoint sent{};
    std::optional<TimePoint> answered;
    uint16_t from_port = 0;
    bool correct = false;
  };

  PacedUdpLoad(uint16_t port, Duration interval, uint64_t seed)
      : port_(port), interval_(interval), seed_(seed) {}
  ~PacedUdpLoad();
  Status Start();
  // Stops sending, then keeps receiving until every request is answered or `drain` passes.
  void Stop(Duration drain);
  const std::vector<Record>& records() const { return records_; }
  // Requests sent so far; safe to read from any thread while the load runs.
  size_t sent() const { return sent_.load(); }
  // A request is lost when it got no answer within `patience` (late answers, e.g. those a
  // stopped server sends once it resumes, count as lost).
  static bool Lost(const Record& r, Duration patience);
  // Records sent within [from, to] (either bound may be open), all or only the lost ones.
  size_t CountSent(std::optional<TimePoint> from, std::optional<TimePoint> to,
                   std::optional<Duration> lost_patience = std::nullopt) const;

 private:
  void Run();
  void ReceiveReady(UdpProbe& probe);

  uint16_t port_;
  Duration interval_;
  uint64_t seed_;
  RealClock clock_;
  std::optional<UdpProbe> probe_;
  std::thread thread_;
  std::atomic<bool> stop_sending_{false};
  std::atomic<int64_t> drain_ns_{0};
  std::atomic<size_t> sent_{0};
  std::vector<Record> records_;               // owned by the thread until Stop returns
  std::vector<std::vector<uint64_t>> asked_;  // ids per request, same index
};

// Fixture: one cluster per test (rr scheduler, 3 servers, heartbeat 100 ms, M=2, N=5). The work
// directory (logs, ready files, key, token) is removed when the test passes and kept, with its
// path printed, when it fails.
class ClusterTest : public ::testing::Test {
 protected:
  static constexpr uint32_t kHeartbeatMs = 100;
  static constexpr uint32_t kSilentAfter = 2;
  static constexpr uint32_t kDownAfter = 5;
  static constexpr int kServers = 3;

  static void SetUpTestSuite();
  void TearDown() override;

  // Starts the cluster and waits until every server is ACTIVE. `tweak` may change the options.
  void StartCluster(const std::function<void(bench::LocalClusterOptions&)>& tweak = {});

  nlohmann::json AdminStatus();
  // State of server `id` as /v1/status lists it ("" when unlisted).
  std::string State(const std::string& id);
  // Polls until server `id` is in `state`; fails the test (and returns false) after `timeout`.
  bool WaitForState(const std::string& id, const std::string& state, Duration timeout);
  std::string Metrics();
  // The value of one series in /metrics (fails the test when absent).
  double Metric(const std::string& series);
  // vsc_membership_transitions_total{from,to}; 0 when that transition never happened.
  double Transitions(const std::string& from, const std::string& to);
  // Index (0-based) of the server whose lookup port is `port`, or -1.
  int ServerIndexByPort(uint16_t port) const;
  // Sends `n` lookups through the director's UDP port one after another (each answered before
  // the next is sent; a lost one is retried once) and returns how many each server answered,
  // indexed like the cluster's servers. Fails the test on a wrong or missing answer. Each retry
  // is a second pick by the director; `resends`, when given, receives how many there were.
  std::vector<int> UdpRoundTrips(int n, uint64_t seed, int* resends = nullptr);

  // The line of a daemon's log in `work_dir` saying it could not listen because the port was
  // taken, or "" if there is none (reported when a cluster fails to start).
  static std::string PortClashLine(const std::string& work_dir);

  std::unique_ptr<bench::LocalCluster> cluster_;
  std::string work_dir_;
  RealClock clock_;
};

}  // namespace vsc::integration

// A director's control server and a real server's agent in one process, each on a thread of its
// own, with a wall clock the test chooses (SteppedClock), and a hand-driven control session
// (RawSession): the pieces of the control-session and agent tests (control_session_test.cc,
// agent_test.cc).
#pragma once

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/unique_fd.h"
#include "director/control_server.h"
#include "proto/frame.h"
#include "proto/session_frames.h"
#include "realserver/agent.h"
#include "support/wait_until.h"

namespace vsc::director::testing {

using namespace std::chrono_literals;
using Bytes = std::vector<uint8_t>;

inline constexpr int64_t kWall = 1'800'000'000'000'000;  // µs
inline constexpr int64_t kHour = 3'600'000'000;

// Real monotonic time (the servers' timers are real), a wall clock the test chooses.
class SteppedClock final : public Clock {
 public:
  explicit SteppedClock(int64_t wall_micros) : wall_(wall_micros) {}
  TimePoint Now() const override { return real_.Now(); }
  int64_t WallMicros() const override { return wall_; }

 private:
  RealClock real_;
  int64_t wall_;
};

inline proto::ClusterKey Key() {
  auto key = proto::ClusterKey::FromHex(std::string(64, 'a'));
  EXPECT_TRUE(key.ok());
  return *key;
}

// Polls `ready` until it holds or `timeout` passes (support/wait_until.h).
inline bool Eventually(const std::function<bool()>& ready, Duration timeout = 5s) {
  return test_support::WaitUntil(ready, timeout);
}

// A director's control plane and server on a thread of their own. Agents heartbeat every
// `heartbeat` (the period the RegisterAck gives them); 2 missed make a server SILENT, 5 DOWN.
class Director {
 public:
  Director(int64_t wall, uint16_t port, Duration heartbeat = 50ms)
      : clock_(wall),
        plane_(membership::Config{heartbeat, 2, 5}, ControlSettings{}),
        server_(io_, plane_, Key(), clock_, [](ViewPtr) {}) {
    Status s = server_.Start(asio::ip::tcp::endpoint(asio::ip::make_address_v4("127.0.0.1"), port),
                             asio::ip::udp::endpoint(asio::ip::make_address_v4("127.0.0.1"), 0));
    EXPECT_TRUE(s.ok()) << s.ToString();
    thread_ = std::thread([this] { io_.run(); });
  }
  ~Director() {
    OnLoop([this] {
      server_.Stop();
      return 0;
    });
    guard_.reset();
    io_.stop();
    thread_.join();
  }
  template <class F>
  auto OnLoop(F f) -> decltype(f()) {
    std::packaged_task<decltype(f())()> task(std::move(f));
    auto result = task.get_future();
    asio::post(io_, [&task] { task(); });
    return result.get();
  }
  std::string State(const std::string& id) {
    return OnLoop([&] {
      const membership::ServerRecord* r = plane_.membership().Find(id);
      return r ? std::string(membership::StateName(r->state)) : std::string();
    });
  }
  uint64_t Incarnation(const std::string& id) {
    return OnLoop([&] {
      const membership::ServerRecord* r = plane_.membership().Find(id);
      return r ? r->reg.incarnation : 0;
    });
  }
  uint64_t HeartbeatsAccepted() {
    return OnLoop([&] { return plane_.membership().counters().heartbeats_accepted; });
  }
  uint64_t HeartbeatsIgnored() {
    return OnLoop([&] {
      const auto& c = plane_.membership().counters();
      return c.heartbeats_stale + c.heartbeats_unknown + server_.counters().dropped_replayed.Get();
    });
  }
  uint64_t Refusals(proto::RegisterAck::Refusal kind) {
    return OnLoop([&] { return plane_.refusals(kind); });
  }
  uint64_t Replayed() {
    return OnLoop([&] { return server_.counters().dropped_replayed.Get(); });
  }
  // Frames and datagrams the server dropped: {oversize, unauthenticated, malformed}.
  std::array<uint64_t, 3> Dropped() {
    return OnLoop([&] {
      const ControlCounters& c = server_.counters();
      return std::array<uint64_t, 3>{c.dropped_oversize.Get(), c.dropped_unauthenticated.Get(),
                                     c.dropped_malformed.Get()};
    });
  }
  uint32_t InFlight(const std::string& id) {
    return OnLoop([&] {
      const membership::ServerRecord* r = plane_.membership().Find(id);
      return r ? r->load.in_flight : 0u;
    });
  }
  Status Remove(const std::string& id) {
    return OnLoop([&] {
      Status s = plane_.Drain(id, clock_.Now());
      return s.ok() ? server_.RemoveServer(id) : s;
    });
  }
  // As the director does after each lease change (ControlServer::SetStandby).
  void SetStandby(std::optional<std::string> holder) {
    OnLoop([&] {
      server_.SetStandby(holder);
      return 0;
    });
  }
  // floating_vip (ControlServer::SetFloatingVip).
  void SetFloatingVip(bool floating) {
    OnLoop([&] {
      server_.SetFloatingVip(floating);
      return 0;
    });
  }
  uint16_t control_port() const { return server_.control_port(); }
  uint16_t heartbeat_port() const { return server_.heartbeat_port(); }

 private:
  asio::io_context io_;
  asio::executor_work_guard<asio::io_context::executor_type> guard_{io_.get_executor()};
  SteppedClock clock_;
  ControlPlane plane_;
  ControlServer server_;
  std::thread thread_;
};

// A real server's agent on a thread of its own.
// A real server's agent on a thread of its own. With `hold_loop` false nothing else keeps its
// io_context busy: the thread ends once the agent has no operation left (ran_out()), which is how
// a test sees that Stop() left no coroutine, timer or socket waiting behind it.
class AgentProcess {
 public:
  AgentProcess(int64_t wall, uint16_t control_port, bool hold_loop = true,
               std::chrono::milliseconds handshake_timeout = std::chrono::milliseconds(5000))
      : AgentProcess(wall, std::vector<uint16_t>{control_port}, hold_loop, handshake_timeout) {}
  // Directors at each of `control_ports` on 127.0.0.1, tried in this order.
  AgentProcess(int64_t wall, const std::vector<uint16_t>& control_ports, bool hold_loop = true,
               std::chrono::milliseconds handshake_timeout = std::chrono::milliseconds(5000))
      : clock_(wall) {
    realserver::AgentOptions o;
    o.handshake_timeout = handshake_timeout;
    o.id = "rs1";
    for (uint16_t port : control_ports) {
      o.directors.emplace_back(asio::ip::make_address_v4("127.0.0.1"), port);
    }
    o.incarnation = static_cast<uint64_t>(wall);
    proto::Endpoint e;
    e.set_service("lookup-udp");
    e.set_host("127.0.0.1");
    e.set_port(7001);
    o.endpoints.push_back(e);
    o.on_exit = [this](int code, const std::string&) { exit_code_ = code; };
    agent_ = std::make_unique<realserver::Agent>(io_, o, Key(), clock_, load_);
    agent_->Start();
    if (!hold_loop) guard_.reset();
    thread_ = std::thread([this] {
      io_.run();
      ran_out_ = true;
    });
  }
  ~AgentProcess() {
    agent_->Stop();
    guard_.reset();
    io_.stop();
    thread_.join();
  }
  int exit_code() const { return exit_code_.load(); }
  realserver::LoadTracker& load() { return load_; }
  realserver::Agent& agent() { return *agent_; }
  bool ran_out() const { return ran_out_.load(); }

 private:
  asio::io_context io_;
  asio::executor_work_guard<asio::io_context::executor_type> guard_{io_.get_executor()};
  SteppedClock clock_;
  realserver::LoadTracker load_;
  std::unique_ptr<realserver::Agent> agent_;
  std::atomic<int> exit_code_{-1};
  std::atomic<bool> ran_out_{false};
  std::thread thread_;
};

// A hand-driven control session: what a recording attacker (or an old process) would send.
class RawSession {
 public:
  explicit RawSession(uint16_t port) : fd_(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) {
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    to.sin_port = htons(port);
    EXPECT_EQ(::connect(fd_.get(), reinterpret_cast<sockaddr*>(&to), sizeof(to)), 0);
  }
  // The next frame's payload; empty when the peer closed or nothing came within 2 s.
  Bytes Next() {
    for (;;) {
      auto frame = decoder_.Next();
      if (!frame.ok()) return {};
      if (frame->has_value()) return **frame;
      pollfd p{fd_.get(), POLLIN, 0};
      if (::poll(&p, 1, 2000) <= 0) return {};
      uint8_t buf[4096];
      const ssize_t n = ::recv(fd_.get(), buf, sizeof(buf), 0);
      if (n <= 0) return {};
      decoder_.Feed(std::span<const uint8_t>(buf, static_cast<size_t>(n)));
    }
  }
  void Send(const Bytes& framed) {
    ASSERT_EQ(::send(fd_.get(), framed.data(), framed.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(framed.size()));
  }

 private:
  UniqueFd fd_;
  proto::FrameDecoder decoder_{proto::kMaxEnvelopeBytes};
};

inline Bytes Framed(const Bytes& payload) {
  Bytes out;
  proto::AppendFrame(out, payload);
  return out;
}

}  // namespace vsc::director::testing

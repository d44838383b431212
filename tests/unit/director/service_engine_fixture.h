// The ServiceEngine fixture: a control thread, a backends thread, two workers and an engine
// over them, with real sockets on loopback; shared by the engine's test files.
#pragma once

#include <gtest/gtest.h>
#include <sys/socket.h>

#include <chrono>
#include <functional>
#include <future>
#include <thread>

#include "director/service_engine.h"
#include "net/port_pair.h"
#include "probe_servers.h"
#include "support/tcp_request.h"

namespace vsc::director::engine_test {

using std::chrono::milliseconds;
using testing::TcpTestServer;
using vservice::AddrPort;
using vservice::DestConfig;
using vservice::IpAddress;
using vservice::ServiceKey;
using vservice::VirtualServiceTable;

inline AddrPort Local(uint16_t port) { return {IpAddress::V4(0x7f000001), port}; }

// A thread running an io_context, and a way to run code on it and wait for the result.
class Loop {
 public:
  Loop() : guard_(io_.get_executor()), thread_([this] { io_.run(); }) {}
  ~Loop() {
    guard_.reset();
    io_.stop();
    thread_.join();
  }
  template <class F>
  auto Run(F f) -> decltype(f()) {
    std::packaged_task<decltype(f())()> task(std::move(f));
    auto result = task.get_future();
    asio::post(io_, [&task] { task(); });
    return result.get();
  }
  asio::io_context& io() { return io_; }

 private:
  asio::io_context io_;
  asio::executor_work_guard<asio::io_context::executor_type> guard_;
  std::thread thread_;
};

// Polls `done` on the test thread until it holds or `limit` passes.
inline bool Eventually(const std::function<bool()>& done,
                       milliseconds limit = milliseconds(10000)) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(milliseconds(10));  // polling a condition, not waiting for it
  }
  return true;
}

// One TCP request through the service: connect, send, read to EOF. "" when refused or closed.
inline std::string Request(uint16_t port, const std::string& what = "ping") {
  return test_support::TcpRequest(port, what);
}

inline uint16_t FreePort() {
  asio::io_context io;
  return testing::ClosedTcpPort(io);
}

class ServiceEngineTest : public ::testing::Test {
 protected:
  ServiceEngineTest() : pool_(2), plane_(membership::Config{}, ControlSettings{}) {
    engine_ =
        std::make_unique<ServiceEngine>(control_.io(), pool_, clock_, plane_, EngineOptions{});
    pool_.Start();
  }
  ~ServiceEngineTest() override {
    control_.Run([this] {
      engine_->Stop();
      return 0;
    });
    pool_.Stop();
    pool_.Join();
    control_.Run([this] {
      engine_.reset();
      return 0;
    });
  }

  // Replaces the engine by one with these options (before any Commit).
  void Reopen(EngineOptions options) {
    control_.Run([&] {
      engine_->Stop();
      engine_ =
          std::make_unique<ServiceEngine>(control_.io(), pool_, clock_, plane_, std::move(options));
      return 0;
    });
  }
  Status Commit(const VirtualServiceTable& t) {
    return control_.Run([&] { return engine_->Commit(t).status(); });
  }
  // Returns once every worker has run what was posted to it before (the views of a Commit).
  void Barrier() {
    for (size_t i = 0; i < pool_.size(); ++i) {
      std::promise<void> done;
      pool_.Post(i, [&done] { done.set_value(); });
      done.get_future().wait();
    }
  }
  ServiceRuntime Runtime(const ServiceKey& key) {
    return control_.Run([&] {
      for (auto& r : engine_->Runtime()) {
        if (r.key == key) return r;
      }
      return ServiceRuntime{};
    });
  }
  DestRuntime Dest(const ServiceKey& key, uint16_t port) {
    for (auto& d : Runtime(key).dests) {
      if (d.dest.port == port) return d;
    }
    return {};
  }
  template <class... A>
  std::unique_ptr<TcpTestServer> Server(A... a) {
    return backends_.Run([&] { return std::make_unique<TcpTestServer>(backends_.io(), a...); });
  }
  void Close(std::unique_ptr<TcpTestServer>& s) {
    backends_.Run([&] {
      s.reset();
      return 0;
    });
  }

  ServiceKey Key(vservice::Proto proto = vservice::Proto::kTcp) {
    if (!port_) port_ = FreePort();
    return {proto, IpAddress::V4(0x7f000001), port_};
  }

  Loop backends_;
  Loop control_;
  RealClock clock_;
  net::WorkerPool pool_;
  ControlPlane plane_;
  std::unique_ptr<ServiceEngine> engine_;
  uint16_t port_ = 0;
};

inline DestConfig WithCheck(milliseconds delay_loop) {
  DestConfig d;
  d.check = vservice::DefaultStaticCheck();
  d.check->delay_loop = delay_loop;
  d.check->connect_timeout = milliseconds(300);
  d.check->delay_before_retry = milliseconds(100);
  return d;
}

}  // namespace vsc::director::engine_test

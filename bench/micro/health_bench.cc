// Benchmark 5 (issue 12): the control thread's cost of 1,000 TCP_CHECK destinations checked
// every second (DefaultStaticCheck: delay_loop 1 s, connect_timeout 1 s, retry 1), and the time
// to detect a backend that dies. The listeners accept on a thread of their own; the checker
// runs on this thread, whose CPU time (getrusage RUSAGE_THREAD) is the figure. On loopback the
// kernel also does the listener's side of each handshake in the connecting thread, so the
// figure includes some server-side work: an upper bound for the checker alone.
#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include <asio.hpp>
#include <atomic>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "director/health_checker.h"
#include "vservice/check_config.h"

namespace {

using asio::ip::tcp;
using vsc::vservice::AddrPort;
using vsc::vservice::IpAddress;
using vsc::vservice::ServiceKey;

constexpr int kDestinations = 1000;
constexpr auto kWarmup = std::chrono::milliseconds(1500);
constexpr auto kMeasure = std::chrono::seconds(5);

struct ThreadCpu {
  double user = 0;
  double sys = 0;
};

ThreadCpu ThreadCpuSeconds() {
  rusage ru{};
  getrusage(RUSAGE_THREAD, &ru);
  auto seconds = [](const timeval& tv) {
    return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) / 1e6;
  };
  return {seconds(ru.ru_utime), seconds(ru.ru_stime)};
}

// kDestinations loopback listeners that accept and close, on their own thread.
class Listeners {
 public:
  Listeners() {
    for (int i = 0; i < kDestinations; ++i) {
      acceptors_.push_back(
          std::make_unique<tcp::acceptor>(io_, tcp::endpoint(asio::ip::address_v4::loopback(), 0)));
      Accept(*acceptors_.back());
    }
    thread_ = std::thread([this] { io_.run(); });
  }
  ~Listeners() {
    work_.reset();
    asio::post(io_, [this] { io_.stop(); });
    thread_.join();
  }
  uint16_t port(int i) const { return acceptors_[i]->local_endpoint().port(); }
  void Close(int i) {
    std::atomic<bool> done{false};
    asio::post(io_, [&] {
      acceptors_[i]->close();
      done = true;
    });
    while (!done) std::this_thread::yield();
  }

 private:
  void Accept(tcp::acceptor& a) {
    a.async_accept([this, &a](const asio::error_code& ec, tcp::socket) {
      if (!ec) Accept(a);
    });
  }
  asio::io_context io_;
  asio::executor_work_guard<asio::io_context::executor_type> work_{io_.get_executor()};
  std::vector<std::unique_ptr<tcp::acceptor>> acceptors_;
  std::thread thread_;
};

void BM_HealthCheck1000TcpEverySecond(benchmark::State& state) {
  for (auto _ : state) {
    Listeners listeners;
    asio::io_context io;
    vsc::RealClock clock;
    AddrPort victim{IpAddress::V4(0x7f000001), listeners.port(0)};
    std::optional<std::chrono::steady_clock::time_point> detected;
    vsc::director::HealthChecker checker(io, clock,
                                         [&](const ServiceKey&, const AddrPort& dest, bool up,
                                             std::optional<uint32_t>, const std::string&) {
                                           if (dest == victim && !up && !detected)
                                             detected = std::chrono::steady_clock::now();
                                         });
    ServiceKey service;
    service.vip = IpAddress::V4(0x0a000001);
    service.port = 80;
    const auto check = vsc::vservice::DefaultStaticCheck();
    for (int i = 0; i < kDestinations; ++i) {
      (void)checker.Add(service, AddrPort{IpAddress::V4(0x7f000001), listeners.port(i)}, check);
    }
    io.run_for(kWarmup);
    auto checks = [&] {
      uint64_t n = 0;
      for (const auto& s : checker.Snapshot()) n += s.checks;
      return n;
    };
    const uint64_t checks0 = checks();
    const ThreadCpu cpu0 = ThreadCpuSeconds();
    const auto t0 = std::chrono::steady_clock::now();
    io.run_for(kMeasure);
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const ThreadCpu cpu1 = ThreadCpuSeconds();
    const double user = cpu1.user - cpu0.user;
    const double sys = cpu1.sys - cpu0.sys;
    const uint64_t checked = checks() - checks0;

    const auto killed = std::chrono::steady_clock::now();
    listeners.Close(0);
    while (!detected && std::chrono::steady_clock::now() - killed < std::chrono::seconds(10)) {
      io.run_for(std::chrono::milliseconds(10));
    }
    state.counters["control_cpu_pct"] = 100.0 * (user + sys) / wall;
    state.counters["user_pct"] = 100.0 * user / wall;
    state.counters["sys_pct"] = 100.0 * sys / wall;
    state.counters["checks_per_s"] = static_cast<double>(checked) / wall;
    state.counters["detect_ms"] =
        detected ? std::chrono::duration<double, std::milli>(*detected - killed).count() : -1;
    state.counters["detect_bound_ms"] = vsc::ToMillis(vsc::vservice::WorstCaseDetectionTime(check));
  }
}
BENCHMARK(BM_HealthCheck1000TcpEverySecond)->Iterations(1)->Unit(benchmark::kSecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();

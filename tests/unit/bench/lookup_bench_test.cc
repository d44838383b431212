#include "bench/lookup_bench.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "unit/client/lookup_responder.h"

namespace vsc::bench {
namespace {

using namespace std::chrono_literals;

LookupBenchOptions Options(const std::string& target) {
  LookupBenchOptions o;
  o.target = target;
  o.duration_s = 1;
  o.concurrency = 4;
  o.timeout = 200ms;
  return o;
}

std::string Udp(uint16_t port) { return "udp://127.0.0.1:" + std::to_string(port); }
std::string Tcp(uint16_t port) { return "tcp://127.0.0.1:" + std::to_string(port); }

void ExpectConsistent(const LookupBenchReport& r) {
  EXPECT_GT(r.sent, 0u);
  EXPECT_EQ(r.answered + r.lost, r.sent);
  EXPECT_LE(r.errors, r.answered);
  EXPECT_GE(r.lookups, (r.answered - r.errors) * static_cast<uint64_t>(r.min_ids));
  EXPECT_LE(r.lookups, (r.answered - r.errors) * static_cast<uint64_t>(r.max_ids));
  EXPECT_LE(r.p50_us, r.p90_us);
  EXPECT_LE(r.p90_us, r.p99_us);
  EXPECT_LE(r.p99_us, r.p999_us);
  EXPECT_LE(r.p999_us, r.max_us);
}

TEST(LookupBenchTest, ClosedLoopUdpAgainstADrStyleResponder) {
  testing::UdpLookupResponder responder;
  LookupBenchOptions o = Options(Udp(responder.port()));
  RealClock clock;
  int lines = 0;
  auto r = RunLookupBench(o, clock, [&](const ProgressLine& p) {
    ++lines;
    EXPECT_FALSE(p.ToString().empty());
  });
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ExpectConsistent(*r);
  EXPECT_EQ(r->lost, 0u);
  EXPECT_EQ(r->errors, 0u);
  EXPECT_EQ(r->answered, responder.answered());
  EXPECT_GT(r->p50_us, 0);
  // The responder finds every id not divisible by 4; ids are uniform, so about 3/4 are found.
  const double found = static_cast<double>(r->found) / static_cast<double>(r->lookups);
  EXPECT_NEAR(found, 0.75, 0.03);
  // The progress thread reports once per second of a 1 s run at most once.
  EXPECT_LE(lines, 1);

  EXPECT_EQ(r->Warning(), "");  // three quarters found: nothing to warn about
  const auto j = nlohmann::json::parse(r->ToJson());
  EXPECT_EQ(j["counts"]["sent"].get<uint64_t>(), r->sent);
  EXPECT_EQ(j["counts"]["answered"].get<uint64_t>(), r->answered);
  EXPECT_EQ(j["options"]["mode"], "closed");
  EXPECT_DOUBLE_EQ(j["latency_us"]["p99"].get<double>(), r->p99_us);
  EXPECT_EQ(j["warning"], "");
  EXPECT_NE(r->SummaryTable().find("requests/s"), std::string::npos);
}

TEST(LookupBenchTest, WarnsWhenMostIdsAreNotFound) {
  LookupBenchReport r;
  r.max_id = 2000000;
  r.lookups = 10000;
  r.found = 1000;  // a 200,000-record database asked for ids up to 2,000,000
  const std::string w = r.Warning();
  EXPECT_NE(w.find("90 % of the ids looked up were not found"), std::string::npos) << w;
  EXPECT_NE(w.find("--max-id 2000000"), std::string::npos) << w;
  EXPECT_EQ(nlohmann::json::parse(r.ToJson())["warning"], w);
  r.found = 5000;  // half found: a sparse id space, not a mistake
  EXPECT_EQ(r.Warning(), "");
  r.lookups = 100;  // too few to judge
  r.found = 0;
  EXPECT_EQ(r.Warning(), "");
}

TEST(LookupBenchTest, TheOpenLoopScheduleIsRateTimesDurationStaggeredOverTheWorkers) {
  LookupBenchOptions o = Options("udp://127.0.0.1:9");
  o.rate = 2000;
  o.concurrency = 2;
  EXPECT_EQ(ScheduledSends(o), 2000u);
  EXPECT_EQ(OpenLoopScheduleOf(o, 0).interval, 1ms);  // 1000/s per worker
  EXPECT_EQ(OpenLoopScheduleOf(o, 0).first, 0ms);
  EXPECT_EQ(OpenLoopScheduleOf(o, 1).first, 500us);
  o.rate = 500;
  o.concurrency = 1;
  o.duration_s = 0.5;
  EXPECT_EQ(ScheduledSends(o), 250u);
  o.rate = 3;  // 3/s for 0.5 s: at 0, 333.3 ms (the next, 666.7 ms, is past the end)
  EXPECT_EQ(ScheduledSends(o), 2u);
}

// The count does not depend on how the threads ran: every slot of the schedule is sent, late
// ones late. And none before its time: each request is read by the responder no earlier than
// its slot, counted from a moment before the run began.
TEST(LookupBenchTest, OpenLoopSendsEveryScheduledRequestAndNoneEarly) {
  testing::UdpLookupResponder responder(
      {.drop_first = 0, .stale_before = false, .record_arrivals = true});
  LookupBenchOptions o = Options(Udp(responder.port()));
  o.rate = 2000;
  o.concurrency = 2;
  RealClock clock;
  const TimePoint before = clock.Now();
  auto r = RunLookupBench(o, clock, nullptr);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ExpectConsistent(*r);
  EXPECT_EQ(r->sent + r->send_failures, ScheduledSends(o));
  EXPECT_EQ(r->lost, 0u);
  const auto arrivals = responder.arrivals();
  EXPECT_EQ(arrivals.size(), r->sent);
  size_t early = 0;
  for (const auto& a : arrivals) {
    const int worker = static_cast<int>(a.request_id >> 40);
    const uint64_t k = (a.request_id & ((uint64_t{1} << 40) - 1)) - 1;
    const OpenLoopSchedule s = OpenLoopScheduleOf(o, worker);
    if (a.at < before + s.first + s.interval * static_cast<int64_t>(k)) ++early;
  }
  EXPECT_EQ(early, 0u) << "requests sent before their slot (a burst, not a paced open loop)";
}

// Real time, except that 300 ms after it was first read it jumps `jump` ahead, once: to the
// bench (which reads it first as it starts), its workers stalled there for that long.
class JumpingClock final : public Clock {
 public:
  explicit JumpingClock(Duration jump) : jump_(jump) {}
  TimePoint Now() const override {
    const TimePoint now = real_.Now();
    int64_t first = kUnset;
    first_ns_.compare_exchange_strong(first, now.time_since_epoch().count());
    if (first == kUnset) first = now.time_since_epoch().count();
    return now.time_since_epoch() - Duration(first) < std::chrono::milliseconds(300) ? now
                                                                                     : now + jump_;
  }
  int64_t WallMicros() const override { return real_.WallMicros(); }

 private:
  static constexpr int64_t kUnset = INT64_MIN;
  RealClock real_;
  Duration jump_;
  mutable std::atomic<int64_t> first_ns_{kUnset};
};

TEST(LookupBenchTest, OpenLoopSendsTheRequestsAStalledWorkerMissedLateNotNever) {
  testing::UdpLookupResponder responder;
  LookupBenchOptions o = Options(Udp(responder.port()));
  o.rate = 2000;
  o.concurrency = 2;
  // The stall runs past the end of the 1 s period: about 70 % of the schedule is still due.
  JumpingClock clock(std::chrono::milliseconds(1500));
  auto r = RunLookupBench(o, clock, nullptr);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ExpectConsistent(*r);
  EXPECT_EQ(r->sent + r->send_failures, ScheduledSends(o));
  EXPECT_EQ(r->lost, 0u);
  // Their latency counts from the slot they missed: at least the stall for most of them.
  EXPECT_GE(r->p50_us, 500'000);
}

TEST(LookupBenchTest, OpenLoopKeepsManyRequestsOutstandingPerWorker) {
  // Each answer is held 20 ms: one request at a time would allow 50 req/s on one worker.
  testing::UdpLookupResponder responder({.drop_first = 0, .stale_before = false, .delay = 20ms});
  LookupBenchOptions o = Options(Udp(responder.port()));
  o.rate = 500;
  o.concurrency = 1;
  RealClock clock;
  auto r = RunLookupBench(o, clock, nullptr);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ExpectConsistent(*r);
  EXPECT_EQ(r->sent + r->send_failures, ScheduledSends(o));
  EXPECT_EQ(ScheduledSends(o), 500u);
  EXPECT_EQ(r->lost, 0u);
  EXPECT_GE(r->p50_us, 20'000);  // measured from the intended send, so never below the hold
}

TEST(LookupBenchTest, DroppedRequestsAreCountedAsLost) {
  testing::UdpLookupResponder responder({.drop_first = 5, .stale_before = false});
  LookupBenchOptions o = Options(Udp(responder.port()));
  o.concurrency = 1;
  o.duration_s = 0.5;
  o.timeout = 50ms;
  RealClock clock;
  auto r = RunLookupBench(o, clock, nullptr);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ExpectConsistent(*r);
  EXPECT_EQ(r->lost, 5u);
  EXPECT_NEAR(r->loss_pct, 100.0 * 5 / static_cast<double>(r->sent), 1e-9);
}

TEST(LookupBenchTest, ClosedAndOpenLoopOverTcp) {
  testing::TcpLookupResponder responder;
  RealClock clock;
  LookupBenchOptions o = Options(Tcp(responder.port()));
  o.duration_s = 0.5;
  auto closed = RunLookupBench(o, clock, nullptr);
  ASSERT_TRUE(closed.ok()) << closed.status().ToString();
  ExpectConsistent(*closed);
  EXPECT_EQ(closed->lost, 0u);
  o.rate = 1000;
  o.concurrency = 2;
  auto open = RunLookupBench(o, clock, nullptr);
  ASSERT_TRUE(open.ok()) << open.status().ToString();
  ExpectConsistent(*open);
  EXPECT_EQ(open->sent + open->send_failures, ScheduledSends(o));
  EXPECT_EQ(ScheduledSends(o), 500u);
  EXPECT_EQ(open->lost, 0u);
}

TEST(LookupBenchTest, RefusedTcpTargetFailsBeforeTheRun) {
  const int fd = testing::BoundSocket(SOCK_STREAM);  // bound, not listening: connect is refused
  RealClock clock;
  auto r = RunLookupBench(Options(Tcp(testing::LocalPort(fd))), clock, nullptr);
  ::close(fd);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kUnavailable);
}

// An IPv6 target is connected to over IPv6: the refusal names [::1].
TEST(LookupBenchTest, AnIpv6TcpTargetIsReachedOverIpv6) {
  const int fd = ::socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in6 a{};
  a.sin6_family = AF_INET6;
  a.sin6_addr = in6addr_loopback;
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);  // not listening
  socklen_t len = sizeof(a);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  const std::string target = "tcp://[::1]:" + std::to_string(ntohs(a.sin6_port));
  RealClock clock;
  auto r = RunLookupBench(Options(target), clock, nullptr);
  ::close(fd);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kUnavailable);
  EXPECT_NE(r.status().message().find("connect [::1]:"), std::string::npos)
      << r.status().ToString();
}

TEST(LookupBenchTest, OptionsAreValidated) {
  const LookupBenchOptions good = Options("udp://127.0.0.1:9");
  EXPECT_TRUE(CheckLookupBenchOptions(good).ok());
  auto bad = [&](auto mutate) {
    LookupBenchOptions o = good;
    mutate(o);
    return CheckLookupBenchOptions(o).code();
  };
  EXPECT_EQ(bad([](auto& o) { o.target = "127.0.0.1:9"; }), Code::kInvalidArgument);
  EXPECT_EQ(bad([](auto& o) { o.duration_s = 0; }), Code::kInvalidArgument);
  EXPECT_EQ(bad([](auto& o) { o.concurrency = 0; }), Code::kInvalidArgument);
  EXPECT_EQ(bad([](auto& o) { o.min_ids = 0; }), Code::kInvalidArgument);
  EXPECT_EQ(bad([](auto& o) { o.max_ids = 11; }), Code::kInvalidArgument);
  EXPECT_EQ(bad([](auto& o) { o.min_ids = 5, o.max_ids = 4; }), Code::kInvalidArgument);
  EXPECT_EQ(bad([](auto& o) { o.max_id = 0; }), Code::kInvalidArgument);
  EXPECT_EQ(bad([](auto& o) { o.rate = -1; }), Code::kInvalidArgument);
  EXPECT_EQ(bad([](auto& o) { o.timeout = 0ms; }), Code::kInvalidArgument);
}

}  // namespace
}  // namespace vsc::bench

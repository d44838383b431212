#include "bench/lookup_bench.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

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

TEST(LookupBenchTest, OpenLoopSendsRateTimesDuration) {
  testing::UdpLookupResponder responder;
  LookupBenchOptions o = Options(Udp(responder.port()));
  o.rate = 2000;
  o.concurrency = 2;
  RealClock clock;
  auto r = RunLookupBench(o, clock, nullptr);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ExpectConsistent(*r);
  EXPECT_NEAR(static_cast<double>(r->sent), 2000.0, 2000.0 * 0.05);
  EXPECT_EQ(r->lost, 0u);
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
  EXPECT_NEAR(static_cast<double>(r->sent), 500.0, 25.0);
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
  EXPECT_NEAR(static_cast<double>(open->sent), 500.0, 25.0);
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

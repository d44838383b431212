#include "director/health_checker.h"

#include <gtest/gtest.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <vector>

#include "probe_servers.h"

namespace vsc::director {
namespace {

using namespace testing;  // NOLINT
using std::chrono::milliseconds;
using vservice::AddrPort;
using vservice::CheckConfig;
using vservice::CheckType;
using vservice::IpAddress;
using vservice::ServiceKey;

struct Change {
  AddrPort dest;
  bool up;
  std::optional<uint32_t> weight;
  std::string reason;
  std::chrono::steady_clock::time_point at;
};

CheckConfig Fast(CheckType type = CheckType::kTcp) {
  CheckConfig c = vservice::DefaultCheck(type);
  c.delay_loop = milliseconds(50);
  c.connect_timeout = milliseconds(100);
  c.delay_before_retry = milliseconds(20);
  return c;
}

AddrPort Local(uint16_t port) { return AddrPort{IpAddress::V4(0x7f000001), port}; }

class HealthCheckerTest : public ::testing::Test {
 protected:
  HealthCheckerTest()
      : checker_(std::make_unique<HealthChecker>(
            io_, clock_,
            [this](const ServiceKey&, const AddrPort& dest, bool up, std::optional<uint32_t> w,
                   const std::string& reason) {
              changes_.push_back({dest, up, w, reason, std::chrono::steady_clock::now()});
            })) {
    service_.vip = IpAddress::V4(0x0a000001);
    service_.port = 80;
  }
  CheckSnapshot Snap(const AddrPort& dest) {
    for (const CheckSnapshot& s : checker_->Snapshot()) {
      if (s.dest == dest) return s;
    }
    ADD_FAILURE() << "no snapshot for " << vservice::ToString(dest);
    return {};
  }
  bool WaitChecks(const AddrPort& dest, uint64_t n) {
    return RunUntil(io_, [&] { return Snap(dest).checks >= n; });
  }

  asio::io_context io_;
  RealClock clock_;
  ServiceKey service_;
  std::vector<Change> changes_;
  std::unique_ptr<HealthChecker> checker_;
};

TEST_F(HealthCheckerTest, AddUpdateRemoveByKey) {
  const AddrPort d = Local(ClosedTcpPort(io_));
  CheckConfig bad = Fast();
  bad.delay_loop = Duration::zero();
  EXPECT_EQ(checker_->Add(service_, d, bad).code(), Code::kInvalidArgument);
  ASSERT_TRUE(checker_->Add(service_, d, Fast()).ok());
  EXPECT_EQ(checker_->Add(service_, d, Fast()).code(), Code::kAlreadyExists);
  EXPECT_TRUE(checker_->Update(service_, d, Fast(CheckType::kUdp)).ok());
  EXPECT_EQ(Snap(d).type, CheckType::kUdp);
  EXPECT_EQ(checker_->Update(service_, Local(1), Fast()).code(), Code::kNotFound);
  EXPECT_EQ(checker_->size(), 1u);
  EXPECT_TRUE(checker_->Remove(service_, d).ok());
  EXPECT_EQ(checker_->Remove(service_, d).code(), Code::kNotFound);
  EXPECT_EQ(checker_->size(), 0u);
  RunUntil(
      io_, [] { return false; }, milliseconds(200));
  EXPECT_TRUE(changes_.empty());  // a removed destination reports nothing
}

TEST_F(HealthCheckerTest, TcpUpStaysUpAndRefusedGoesDownWithReasonAndCounters) {
  TcpTestServer server(io_, TcpTestServer::Mode::kSilent);
  const AddrPort up = Local(server.endpoint().port());
  const AddrPort down = Local(ClosedTcpPort(io_));
  ASSERT_TRUE(checker_->Add(service_, up, Fast()).ok());
  ASSERT_TRUE(checker_->Add(service_, down, Fast()).ok());
  ASSERT_TRUE(WaitChecks(up, 3));
  ASSERT_TRUE(RunUntil(io_, [&] { return !changes_.empty(); }));
  ASSERT_EQ(changes_.size(), 1u);
  EXPECT_EQ(changes_[0].dest, down);
  EXPECT_FALSE(changes_[0].up);
  EXPECT_EQ(changes_[0].reason, "TCP_CHECK on " + vservice::ToString(down) +
                                    " failed after 0 retries: Connection refused");
  const CheckSnapshot s = Snap(up);
  EXPECT_TRUE(s.up);
  EXPECT_EQ(s.last_result, "ok: connected");
  EXPECT_GT(s.last_duration, Duration::zero());
  EXPECT_LT(s.last_duration, milliseconds(100));  // within connect_timeout
  EXPECT_EQ(s.failures, 0u);
  const CheckSnapshot f = Snap(down);
  EXPECT_FALSE(f.up);
  EXPECT_EQ(f.last_result, "failed: Connection refused");
  EXPECT_EQ(f.transitions, 1u);
  EXPECT_GE(f.failures, 1u);
}

TEST_F(HealthCheckerTest, AlphaDestinationComesUpOnItsFirstSuccess) {
  TcpTestServer server(io_, TcpTestServer::Mode::kSilent);
  CheckConfig c = Fast();
  c.alpha = true;
  const AddrPort d = Local(server.endpoint().port());
  ASSERT_TRUE(checker_->Add(service_, d, c).ok());
  EXPECT_FALSE(Snap(d).up);
  ASSERT_TRUE(RunUntil(io_, [&] { return !changes_.empty(); }));
  EXPECT_TRUE(changes_[0].up);
  EXPECT_EQ(Snap(d).checks, 1u);
}

TEST_F(HealthCheckerTest, MiscDynamicWeightIsReported) {
  CheckConfig c = Fast(CheckType::kMisc);
  c.misc_path = "exit 7";
  c.misc_dynamic = true;
  // The command's bound defaults to delay_loop (50 ms here): a shell started on a loaded
  // machine can miss that, and this test is about the weight, not the timeout (the next is).
  c.misc_timeout = milliseconds(5000);
  ASSERT_TRUE(checker_->Add(service_, Local(7), c).ok());
  ASSERT_TRUE(RunUntil(io_, [&] { return !changes_.empty(); }));
  EXPECT_TRUE(changes_[0].up);
  EXPECT_EQ(changes_[0].weight, std::optional<uint32_t>(5));
}

TEST_F(HealthCheckerTest, HangingMiscCommandIsCountedAsAFailure) {
  CheckConfig c = Fast(CheckType::kMisc);
  c.misc_path = "sleep 30";
  c.misc_timeout = milliseconds(100);
  ASSERT_TRUE(checker_->Add(service_, Local(7), c).ok());
  ASSERT_TRUE(RunUntil(io_, [&] { return !changes_.empty(); }));
  EXPECT_FALSE(changes_[0].up);
  EXPECT_NE(changes_[0].reason.find("timed out after 100 ms"), std::string::npos);
  EXPECT_EQ(Snap(Local(7)).failures, 1u);
}

// A backend killed while up is detected no sooner than its retries allow and no later than
// the worst case of vservice::WorstCaseDetectionTime.
TEST_F(HealthCheckerTest, DetectionTimeOfAKilledBackendIsWithinTheFormulasBounds) {
  auto server = std::make_unique<TcpTestServer>(io_, TcpTestServer::Mode::kSilent);
  CheckConfig c = Fast();
  c.delay_loop = milliseconds(100);
  c.retry = 2;
  c.delay_before_retry = milliseconds(50);
  const AddrPort d = Local(server->endpoint().port());
  ASSERT_TRUE(checker_->Add(service_, d, c).ok());
  ASSERT_TRUE(WaitChecks(d, 2));
  const auto killed = std::chrono::steady_clock::now();
  server.reset();  // the port now refuses
  ASSERT_TRUE(RunUntil(io_, [&] { return !changes_.empty(); }));
  const auto detection = changes_[0].at - killed;
  EXPECT_FALSE(changes_[0].up);
  EXPECT_NE(changes_[0].reason.find("failed after 2 retries"), std::string::npos);
  EXPECT_GE(detection, c.retry * c.delay_before_retry);
  EXPECT_LE(detection, vservice::WorstCaseDetectionTime(c));
}

// 200 checks of black-holed and silent HTTP targets run while a 10 ms ticker on the same
// io_context keeps its time: no probe blocks the thread. A probe that blocked would hold the
// thread for its connect_timeout (100 ms), and 200 of them for seconds; the bound is two
// connect timeouts, so a loaded machine's scheduling delay (tens of ms) does not fail it.
TEST_F(HealthCheckerTest, ManySlowChecksNeverBlockTheIoContext) {
  spdlog::set_level(spdlog::level::err);  // 200 DOWN lines say nothing here
  BlackHole hole(io_);
  TcpTestServer silent(io_, TcpTestServer::Mode::kSilent);
  CheckConfig http = Fast(CheckType::kHttpGet);
  http.path = "/";
  for (uint16_t i = 0; i < 100; ++i) {
    ServiceKey s = service_;
    s.port = static_cast<uint16_t>(1000 + i);
    ASSERT_TRUE(checker_->Add(s, Local(hole.endpoint().port()), Fast()).ok());
    ASSERT_TRUE(checker_->Add(s, Local(silent.endpoint().port()), http).ok());
  }
  asio::steady_timer ticker(io_);
  auto next = std::chrono::steady_clock::now();
  Duration worst_lateness{};
  int ticks = 0;
  std::function<void()> arm = [&] {
    next += milliseconds(10);
    ticker.expires_at(next);
    ticker.async_wait([&](const asio::error_code& ec) {
      if (ec) return;
      worst_lateness = std::max<Duration>(worst_lateness, std::chrono::steady_clock::now() - next);
      ++ticks;
      arm();
    });
  };
  arm();
  ASSERT_TRUE(RunUntil(io_, [&] { return ticks >= 80; }));
  uint64_t failures = 0;
  for (const CheckSnapshot& s : checker_->Snapshot()) failures += s.failures;
  EXPECT_GE(failures, 200u);  // every target failed at least once meanwhile, at its timeout
  EXPECT_LT(worst_lateness, 2 * http.connect_timeout);
  spdlog::set_level(spdlog::level::info);
}

}  // namespace
}  // namespace vsc::director

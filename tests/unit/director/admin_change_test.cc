// An admin change is answered only once every worker holds the view it published (issue 10: a
// request sent right after `POST /v1/servers/rs2/drain` answered could still be picked for rs2
// by a worker that had not yet run its new view). A real Director on 127.0.0.1 with two workers,
// one of them held busy by the test; and AdminApi::Serve against a barrier the test controls.
#include <gtest/gtest.h>

#include <asio/co_spawn.hpp>
#include <asio/detached.hpp>
#include <future>
#include <nlohmann/json.hpp>

#include "director/admin_api.h"
#include "director/director.h"
#include "fake_service_editor.h"
#include "net/http_client.h"
#include "support/temp_dir.h"
#include "support/test_key.h"
#include "support/wait_until.h"
#include "vservice/ipvsadm_rules.h"

namespace vsc::director {
namespace {

using namespace std::chrono_literals;
using test_support::WaitUntil;

using test_support::TestKey;

DirectorConfig Config(const test_support::TempDir& dir) {
  DirectorConfig c;
  c.lookup_port = c.control_port = c.heartbeat_port = c.admin_port = 0;
  c.write_port = c.sql_port = c.http_port = c.ring_port = 0;
  c.workers = 2;
  c.services_file = dir.File("services.toml");
  return c;
}

Result<net::HttpResponse> Admin(uint16_t port, std::string_view method, std::string_view path,
                                std::string_view body = "") {
  return net::HttpRequestSync("127.0.0.1", port, method, path, body,
                              {{"Authorization", "Bearer token"}}, 10s);
}

std::string Scheduler(uint16_t port) {
  auto r = Admin(port, "GET", "/v1/status");
  if (!r.ok() || r->status != 200) return "";
  return nlohmann::json::parse(r->body)["services"][0]["scheduler"].get<std::string>();
}

TEST(AdminChangeTest, IsAnsweredOnlyOnceEveryWorkerHoldsTheNewView) {
  test_support::TempDir dir;
  RealClock clock;
  Director d(Config(dir), TestKey(), "token", clock);
  ASSERT_TRUE(d.Start().ok());
  const uint16_t port = d.admin_port();
  ASSERT_EQ(Scheduler(port), "wlc");

  // Worker 1 runs a long handler: every view posted to it from now on waits behind it.
  std::promise<void> busy, release;
  std::shared_future<void> released = release.get_future().share();
  d.workers().Post(1, [&busy, released] {
    busy.set_value();
    released.wait();
  });
  busy.get_future().wait();
  auto answer = std::async(std::launch::async, [port] {
    return Admin(port, "POST", "/v1/scheduler", R"({"scheduler": "rr"})");
  });
  // The change is made on the control thread at once (the status shows it)...
  ASSERT_TRUE(WaitUntil([&] { return Scheduler(port) == "rr"; }, 5s));
  // ...but not answered while worker 1 has not run the view that carries it.
  EXPECT_EQ(answer.wait_for(1s), std::future_status::timeout)
      << "answered while a worker still held the old view";
  release.set_value();
  ASSERT_EQ(answer.wait_for(5s), std::future_status::ready);
  auto r = answer.get();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, 200) << r->body;
  d.Stop();
}

// AdminApi::Serve with a barrier the test answers: which requests wait, and what a barrier that
// never passes gives.
class AdminServeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    vservice::VirtualServiceTable table;  // the built-in lookup entries (listen:lookup_port)
    ASSERT_TRUE(vservice::RestoreRules(table,
                                       "-A -u 127.0.0.1:7000 -s wlc\n"
                                       "-A -t 127.0.0.1:7000 -s wlc\n")
                    .ok());
    ASSERT_TRUE(services_.Commit(table).ok());
    api_.SetServices(&services_);
  }

  std::string LookupScheduler() const {
    const vservice::ServiceKey lookup{vservice::Proto::kUdp, vservice::IpAddress::V4(0x7f000001),
                                      7000};
    return services_.table().Find(lookup)->config.scheduler;
  }

  net::HttpResponse Serve(const std::string& method, const std::string& path,
                          const std::string& body) {
    net::HttpRequest req;
    req.method = method;
    req.target = req.path = path;
    req.body = body;
    req.headers.emplace_back("Authorization", "Bearer token");
    std::optional<net::HttpResponse> out;
    asio::co_spawn(
        io_, [&]() -> asio::awaitable<void> { out = co_await api_.Serve(std::move(req)); },
        asio::detached);
    io_.restart();
    io_.run_for(10s);
    EXPECT_TRUE(out.has_value()) << method << " " << path << " never answered";
    return out.value_or(net::HttpResponse{});
  }

  ManualClock clock_;
  asio::io_context io_;
  ControlPlane plane_{membership::Config{100ms, 2, 5}, ControlSettings{}};
  proto::ClusterKey key_ = TestKey();
  ControlServer control_{io_, plane_, key_, clock_, [](ViewPtr) {}};
  FakeServiceEditor services_;
  DirectorConfig config_;
  AdminApi api_{plane_, control_, config_, clock_, "token", 7000};
  int barriers_ = 0;
};

TEST_F(AdminServeTest, OnlyAChangeThatSucceededWaitsForTheBarrier) {
  api_.SetViewBarrier([this](std::function<void()> done) {
    ++barriers_;
    asio::post(io_, std::move(done));
  });
  EXPECT_EQ(Serve("GET", "/v1/status", "").status, 200);
  EXPECT_EQ(Serve("POST", "/v1/scheduler", R"({"scheduler": "nope"})").status, 400);
  EXPECT_EQ(barriers_, 0) << "a read or a refused change waited for the workers";
  EXPECT_EQ(Serve("POST", "/v1/scheduler", R"({"scheduler": "rr"})").status, 200);
  EXPECT_EQ(barriers_, 1);
  EXPECT_EQ(LookupScheduler(), "rr");
}

TEST_F(AdminServeTest, ABarrierThatNeverPassesIsA503ThatSaysTheChangeWasMade) {
  std::function<void()> held;  // never called
  api_.SetViewBarrier([&held](std::function<void()> done) { held = std::move(done); }, 50ms);
  const net::HttpResponse r = Serve("POST", "/v1/scheduler", R"({"scheduler": "rr"})");
  EXPECT_EQ(r.status, 503);
  EXPECT_NE(r.body.find("the change was made"), std::string::npos) << r.body;
  EXPECT_NE(r.body.find("within 50 ms"), std::string::npos) << r.body;
  EXPECT_EQ(LookupScheduler(), "rr");
}

}  // namespace
}  // namespace vsc::director

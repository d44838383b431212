// `vsc realserver --service NAME=tcp:HOST:PORT` (issue 12): a real server fronting an nginx it
// does not implement. The director's destination at that address follows the agent — its id
// in the listing, its drain and weight — on top of the destination's own health check, while a
// second nginx without an agent stays a plain static destination. Real processes: a `vsc
// director`, one `vsc realserver`, two nginx, curl.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include "integration/cluster_harness.h"
#include "integration/vsc_process.h"
#include "support/peer_process.h"

namespace vsc::integration {
namespace {

using namespace std::chrono_literals;

constexpr const char* kCurl = "/usr/bin/curl";

class FrontedServiceTest : public ClusterTest {
 protected:
  std::pair<int, std::string> Adm(const std::vector<std::string>& args) {
    return RunAdm(work_dir_, cluster_->admin_port(), work_dir_ + "/director-admin.token", args);
  }
  // The listing's line for destination `addr` ("" when not listed).
  std::string Line(const std::string& addr) {
    std::istringstream in(Adm({"-L", "-n", "-t", vip_}).second);
    for (std::string line; std::getline(in, line);) {
      if (line.find("-> " + addr) != std::string::npos) return line;
    }
    return "";
  }
  // The bodies of `n` GETs through the virtual service, one connection each.
  std::multiset<std::string> Bodies(int n) {
    std::multiset<std::string> out;
    for (int i = 0; i < n; ++i) {
      std::string cmd = std::string(kCurl) + " -s -m 5 http://" + vip_ + "/";
      std::string text;
      if (FILE* p = ::popen(cmd.c_str(), "r")) {
        char buf[256];
        while (size_t r = std::fread(buf, 1, sizeof(buf), p)) text.append(buf, r);
        ::pclose(p);
      }
      out.insert(text);
    }
    return out;
  }
  std::string vip_;
};

TEST_F(FrontedServiceTest, ADestinationFrontedByAnAgentFollowsItsDrainAndWeight) {
  for (const char* tool : {test_support::kNginxBinary, kCurl}) {
    ASSERT_TRUE(std::filesystem::exists(tool)) << tool << " is missing; run scripts/install-deps";
  }
  const std::string dir = MakeTempDir("vsc-fronted");
  test_support::NginxProcess a(dir + "/a", "127.0.0.2", test_support::FreePort("127.0.0.2"),
                               "backend-a");
  test_support::NginxProcess b(dir + "/b", "127.0.0.3", test_support::FreePort("127.0.0.3"),
                               "backend-b");
  ASSERT_NO_FATAL_FAILURE(a.Start());
  ASSERT_NO_FATAL_FAILURE(b.Start());
  ASSERT_NO_FATAL_FAILURE(StartCluster([&](bench::LocalClusterOptions& o) {
    o.real_servers = 1;
    o.rs_extra_args = {"--service", "web=tcp:" + a.address()};
  }));
  vip_ = "127.0.0.1:" + std::to_string(test_support::FreePort("127.0.0.1"));
  ASSERT_EQ(Adm({"-A", "-t", vip_, "-s", "rr"}).first, 0);
  ASSERT_EQ(Adm({"-a", "-t", vip_, "-r", a.address(), "-m"}).first, 0);
  ASSERT_EQ(Adm({"-a", "-t", vip_, "-r", b.address(), "-m"}).first, 0);

  // The agent's id and state beside the fronted address; the other stays a static server.
  EXPECT_TRUE(WaitUntil(
      [&] { return Line(a.address() + " (rs1)").find("ACTIVE") != std::string::npos; }, 10s, 50ms))
      << Adm({"-L", "-n"}).second;
  EXPECT_TRUE(
      WaitUntil([&] { return Line(b.address()).find("UP") != std::string::npos; }, 10s, 50ms))
      << Line(b.address());
  EXPECT_EQ(Line(b.address()).find("(rs"), std::string::npos) << Line(b.address());
  auto both = Bodies(6);
  EXPECT_EQ(both.count("backend-a\n"), 3u);
  EXPECT_EQ(both.count("backend-b\n"), 3u);

  // Draining the agent quiesces the destination it fronts: every new connection goes to b.
  ASSERT_EQ(Adm({"drain", "rs1"}).first, 0);
  EXPECT_TRUE(
      WaitUntil([&] { return Line(a.address()).find("DRAINING") != std::string::npos; }, 10s, 50ms))
      << Line(a.address());
  EXPECT_EQ(Bodies(6).count("backend-b\n"), 6u);

  // A weight above 0 ends the drain: a takes new connections again.
  ASSERT_EQ(Adm({"weight", "rs1", "1"}).first, 0);
  EXPECT_TRUE(
      WaitUntil([&] { return Line(a.address()).find("ACTIVE") != std::string::npos; }, 10s, 50ms))
      << Line(a.address());
  EXPECT_EQ(Bodies(6).count("backend-a\n"), 3u);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace vsc::integration

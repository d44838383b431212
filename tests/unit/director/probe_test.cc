#include "director/probe.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "probe_servers.h"

namespace vsc::director {
namespace {

using namespace testing;  // NOLINT
using membership::ProbeResult;
using std::chrono::milliseconds;
using vservice::CheckConfig;
using vservice::CheckType;

class ProbeTest : public ::testing::Test {
 public:
  ProbeResult Run(const CheckConfig& c, tcp::endpoint ep, Duration timeout = milliseconds(200)) {
    std::optional<ProbeResult> out;
    asio::co_spawn(io_, RunProbe(c, ep, "127.0.0.1", timeout),
                   [&out](std::exception_ptr, ProbeResult r) { out = std::move(r); });
    EXPECT_TRUE(RunUntil(io_, [&] { return out.has_value(); }));
    return out.value_or(ProbeResult{false, "did not finish", {}});
  }
  ProbeResult Http(const std::string& response, CheckConfig c = HttpCheck()) {
    TcpTestServer server(io_, TcpTestServer::Mode::kRespond, response);
    return Run(c, server.endpoint());
  }
  static CheckConfig HttpCheck() {
    CheckConfig c = vservice::DefaultCheck(CheckType::kHttpGet);
    c.path = "/health";
    return c;
  }
  ProbeResult Misc(const std::string& command, bool dynamic = false,
                   Duration timeout = milliseconds(2000)) {
    CheckConfig c = vservice::DefaultCheck(CheckType::kMisc);
    c.misc_path = command;
    c.misc_dynamic = dynamic;
    return Run(c, tcp::endpoint(), timeout);
  }
  tcp::endpoint Loopback(uint16_t port) { return {asio::ip::address_v4::loopback(), port}; }

  asio::io_context io_;
};

TEST_F(ProbeTest, TcpConnectsToAListenerAndIsRefusedByAClosedPort) {
  TcpTestServer server(io_, TcpTestServer::Mode::kSilent);
  const CheckConfig tcp = vservice::DefaultCheck(CheckType::kTcp);
  EXPECT_TRUE(Run(tcp, server.endpoint()).ok);
  const auto start = std::chrono::steady_clock::now();
  const ProbeResult refused = Run(tcp, Loopback(ClosedTcpPort(io_)), milliseconds(2000));
  EXPECT_FALSE(refused.ok);
  EXPECT_EQ(refused.detail, "Connection refused");
  EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(1000));  // at once
}

TEST_F(ProbeTest, TcpToABlackHoleFailsAtTheTimeout) {
  BlackHole hole(io_);
  const auto start = std::chrono::steady_clock::now();
  const ProbeResult r = Run(vservice::DefaultCheck(CheckType::kTcp), hole.endpoint());
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.detail, "no answer within 200 ms (connect)");
  EXPECT_GE(took, milliseconds(200));
  EXPECT_LT(took, milliseconds(700));
}

// keepalived's TCP_CHECK passes once the handshake completes; what the server does next is an
// HTTP_GET's business.
TEST_F(ProbeTest, AListenerThatResetsPassesTcpButFailsHttp) {
  TcpTestServer server(io_, TcpTestServer::Mode::kReset);
  EXPECT_TRUE(Run(vservice::DefaultCheck(CheckType::kTcp), server.endpoint()).ok);
  const ProbeResult http = Run(HttpCheck(), server.endpoint());
  EXPECT_FALSE(http.ok);
  EXPECT_TRUE(http.detail.find("reset") != std::string::npos ||
              http.detail.find("Broken pipe") != std::string::npos)
      << http.detail;
}

TEST_F(ProbeTest, HttpStatusInAndOutOfRange) {
  EXPECT_TRUE(Http(HttpResponse(200, "ok")).ok);
  const ProbeResult r = Http(HttpResponse(503, "busy"));
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.detail, "HTTP status 503 not in 200-299");
  CheckConfig c = HttpCheck();
  c.status_min = c.status_max = 503;
  EXPECT_TRUE(Http(HttpResponse(503, "busy"), c).ok);
}

TEST_F(ProbeTest, HttpDigestMatchAndMismatch) {
  CheckConfig c = HttpCheck();
  c.digest = "5D41402ABC4B2A76B9719D911017C592";  // MD5("hello"), genhash prints it this way
  EXPECT_TRUE(Http(HttpResponse(200, "hello"), c).ok);
  const ProbeResult r = Http(HttpResponse(200, "hellO"), c);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.detail.find("MD5 digest"), std::string::npos);
}

TEST_F(ProbeTest, HttpSlowServerHitsTheTimeout) {
  TcpTestServer server(io_, TcpTestServer::Mode::kSilent);
  const ProbeResult r = Run(HttpCheck(), server.endpoint());
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.detail, "no answer within 200 ms (reading the response)");
}

TEST_F(ProbeTest, HttpOversizedBodyFails) {
  const ProbeResult r = Http(HttpResponse(200, std::string(kMaxHttpResponse + 1, 'x')));
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.detail.find("response larger than"), std::string::npos) << r.detail;
  EXPECT_TRUE(Http(HttpResponse(200, std::string(kMaxHttpResponse - 100, 'x'))).ok);
}

TEST(JudgeHttpResponse, KeepalivedsOrder) {
  CheckConfig c = vservice::DefaultCheck(CheckType::kHttpGet);
  c.path = "/";
  EXPECT_EQ(JudgeHttpResponse("", c).detail, "no data received");
  EXPECT_FALSE(JudgeHttpResponse("SSH-2.0-OpenSSH\r\n", c).ok);
  EXPECT_EQ(JudgeHttpResponse("HTTP/1.1 204 No Content\r\n\r\n", c).detail, "HTTP status 204");
  c.digest = "d41d8cd98f00b204e9800998ecf8427e";  // MD5 of the empty body
  EXPECT_TRUE(JudgeHttpResponse("HTTP/1.1 204 No Content\r\n\r\n", c).ok);
  EXPECT_FALSE(JudgeHttpResponse("HTTP/1.1 204 No Content\r\n", c).ok);  // no end of headers
  EXPECT_EQ(JudgeHttpResponse("HTTP/1.1 404 Not Found\r\n\r\n", c).detail,
            "HTTP status 404 not in 200-299");  // the status is judged before the digest
}

TEST(UdpReply, HexAndXNibbles) {
  EXPECT_EQ(HexBytes("0aFf"), std::string("\x0a\xff", 2));
  EXPECT_TRUE(ReplyMatches(std::string("\x0a\xff\x01", 3), "0aff"));
  EXPECT_TRUE(ReplyMatches(std::string("\x0a\xff", 2), "0XxF"));
  EXPECT_FALSE(ReplyMatches(std::string("\x0a\xfe", 2), "0aff"));
  EXPECT_FALSE(ReplyMatches(std::string("\x0a", 1), "0aff"));  // too short
}

TEST_F(ProbeTest, UdpEchoWithExpectMatchAndMismatch) {
  UdpEcho echo(io_);
  CheckConfig c = vservice::DefaultCheck(CheckType::kUdp);
  c.payload = "cafe01";
  c.expect = "caXe";
  const tcp::endpoint ep(echo.endpoint().address(), echo.endpoint().port());
  EXPECT_TRUE(Run(c, ep).ok);
  c.expect = "beef";
  const ProbeResult r = Run(c, ep);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.detail, "reply of 3 bytes does not match require_reply beef");
}

TEST_F(ProbeTest, UdpWithoutExpectFailsOnPortUnreachableAndPassesOnSilence) {
  CheckConfig c = vservice::DefaultCheck(CheckType::kUdp);
  c.payload = "00";
  const ProbeResult refused = Run(c, Loopback(ClosedUdpPort(io_)));
  EXPECT_FALSE(refused.ok);
  EXPECT_EQ(refused.detail, "port unreachable (ICMP)");
  udp::socket silent(io_, udp::endpoint(asio::ip::address_v4::loopback(), 0));
  const ProbeResult quiet = Run(c, Loopback(silent.local_endpoint().port()));
  EXPECT_TRUE(quiet.ok) << quiet.detail;
  c.expect = "00";  // a reply is required now
  EXPECT_FALSE(Run(c, Loopback(silent.local_endpoint().port())).ok);
}

TEST_F(ProbeTest, MiscExitCodesAndDynamicWeight) {
  EXPECT_TRUE(Misc("exit 0").ok);
  EXPECT_FALSE(Misc("exit 1").ok);
  const ProbeResult dyn = Misc("exit 7", true);
  EXPECT_TRUE(dyn.ok);
  EXPECT_EQ(dyn.weight, std::optional<uint32_t>(5));
  EXPECT_FALSE(Misc("exit 7", false).ok);
  EXPECT_FALSE(Misc("kill -9 $$", true).ok);  // a signal death is a failure, not weight 135
}

pid_t ReadPid(const std::string& path) {
  std::ifstream in(path);
  pid_t pid = -1;
  in >> pid;
  return pid;
}

// No process of group `pgid` is alive. A member the command started and that was killed is a
// zombie until its new parent (init) reaps it, which may take a while: zombies do not count.
bool NoLiveMember(pid_t pgid) {
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    std::ifstream in(entry.path() / "stat");
    std::string line;
    if (!std::getline(in, line)) continue;
    const size_t paren = line.rfind(')');
    if (paren == std::string::npos) continue;
    std::istringstream fields(line.substr(paren + 2));
    char state = 0;
    pid_t ppid = 0, group = 0;
    fields >> state >> ppid >> group;
    if (group == pgid && state != 'Z') return false;
  }
  return true;
}

// A SIGKILLed process takes a moment to die: allow it 1 s.
bool GroupGone(pid_t pgid) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  while (!NoLiveMember(pgid)) {
    if (std::chrono::steady_clock::now() > deadline) return false;
  }
  return true;
}

struct HungCommand {
  ProbeResult result;
  Duration took{};
  pid_t pgid = -1;  // the command's process group, as the command wrote it
};

// Runs `command` (which hangs) after it wrote its shell's pid, the group's id, to a file.
HungCommand RunHung(ProbeTest& test, const std::string& before, const std::string& command,
                    Duration timeout) {
  const std::string pid_file = ::testing::TempDir() + "misc_hung_pid";
  std::remove(pid_file.c_str());
  const auto start = std::chrono::steady_clock::now();
  HungCommand out;
  out.result = test.Misc(before + "echo $$ > " + pid_file + "; " + command, false, timeout);
  out.took = std::chrono::steady_clock::now() - start;
  out.pgid = ReadPid(pid_file);
  return out;
}

// The command and a background child it started both hang; both are gone after the result.
TEST_F(ProbeTest, MiscCommandThatHangsIsKilledAtMiscTimeout) {
  const HungCommand h = RunHung(*this, "", "sleep 30 & sleep 30", milliseconds(150));
  EXPECT_FALSE(h.result.ok);
  EXPECT_EQ(h.result.detail, "timed out after 150 ms (misc_timeout); its process group was killed");
  EXPECT_GE(h.took, milliseconds(150));
  EXPECT_LT(h.took, milliseconds(1500));  // SIGTERM was enough: no 2 s grace
  ASSERT_GT(h.pgid, 0);
  EXPECT_TRUE(GroupGone(h.pgid));
}

// A command that ignores SIGTERM gets SIGKILL 2 s after the timeout.
TEST_F(ProbeTest, MiscCommandThatIgnoresSigtermIsKilledTwoSecondsLater) {
  const HungCommand h = RunHung(*this, "trap '' TERM; ", "sleep 30", milliseconds(100));
  EXPECT_FALSE(h.result.ok);
  EXPECT_GE(h.took, milliseconds(2100));
  EXPECT_LT(h.took, milliseconds(3500));
  ASSERT_GT(h.pgid, 0);
  EXPECT_TRUE(GroupGone(h.pgid));
}

}  // namespace
}  // namespace vsc::director

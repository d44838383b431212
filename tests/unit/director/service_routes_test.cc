// The /v1/services routes over an in-memory ServiceEditor: every verb edits the table as
// ipvsadm would, errors carry ipvsadm's text and an HTTP status, and a failed call (a bad body,
// a refused table operation, a failed commit) changes nothing.
#include "director/service_routes.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "common/clock.h"
#include "director/service_metrics.h"
#include "fake_service_editor.h"
#include "vservice/ipvsadm_rules.h"
#include "vservice/service_json.h"

namespace vsc::director {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

class ServiceRoutesTest : public ::testing::Test {
 protected:
  net::HttpResponse Call(const std::string& method, const std::string& path,
                         const std::string& body = "") {
    net::HttpRequest req;
    req.method = method;
    req.path = path;
    req.target = path;
    req.body = body;
    return routes_.Handle(req);
  }
  json Body(const net::HttpResponse& r) { return json::parse(r.body); }
  std::string Saved() { return vservice::SaveRules(editor_.table()); }
  // The call fails with `status`, its error contains `text`, and nothing changed.
  void ExpectRefused(const std::string& method, const std::string& path, const std::string& body,
                     int status, const std::string& text) {
    SCOPED_TRACE(method + " " + path + " " + body);
    const vservice::VirtualServiceTable before = editor_.table();
    const int commits = editor_.commits;
    net::HttpResponse r = Call(method, path, body);
    EXPECT_EQ(r.status, status) << r.body;
    EXPECT_NE(Body(r).value("error", "").find(text), std::string::npos) << r.body;
    EXPECT_TRUE(editor_.table() == before);
    EXPECT_EQ(editor_.commits, commits) << "a refused call reached Commit";
  }
  void Restore(const std::string& rules) {
    ASSERT_EQ(Call("POST", "/v1/services/restore", rules).status, 200);
  }

  ManualClock clock_;
  FakeServiceEditor editor_;
  ServiceRoutes routes_{editor_, clock_};
};

constexpr char kWeb[] = R"({"protocol": "tcp", "address": "10.0.0.1:80", "lb_algo": "rr",
  "server": [{"address": "192.168.1.11:80", "weight": 3},
             {"address": "192.168.1.12:8080", "check": {"type": "HTTP_GET", "path": "/hz"}}]})";

TEST_F(ServiceRoutesTest, PostAddsAServiceWithItsServersAndGetListsIt) {
  net::HttpResponse r = Call("POST", "/v1/services", kWeb);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(Body(r)["changes"][0]["kind"], "add-service");
  EXPECT_EQ(Saved(),
            "-A -t 10.0.0.1:80 -s rr\n"
            "-a -t 10.0.0.1:80 -r 192.168.1.11:80 -m -w 3\n"
            "-a -t 10.0.0.1:80 -r 192.168.1.12:8080 -m -w 1\n");
  const auto* check = &editor_.table()
                           .Find(editor_.table().services().begin()->first)
                           ->dests.rbegin()
                           ->second.check;
  ASSERT_TRUE(check->has_value());
  EXPECT_EQ((*check)->path, "/hz");

  json list = Body(Call("GET", "/v1/services"));
  ASSERT_EQ(list["services"].size(), 1u);
  const json& s = list["services"][0];
  EXPECT_EQ(s["key"], "tcp/10.0.0.1:80");
  EXPECT_EQ(s["config"]["lb_algo"], "rr");
  EXPECT_EQ(s["servers"][0]["address"], "192.168.1.11:80");
  EXPECT_EQ(s["servers"][0]["effective_weight"], 3);
  EXPECT_EQ(Body(Call("GET", "/v1/services/tcp/10.0.0.1:80"))["key"], "tcp/10.0.0.1:80");
}

TEST_F(ServiceRoutesTest, RefusalsCarryIpvsadmTextAndChangeNothing) {
  ASSERT_EQ(Call("POST", "/v1/services", kWeb).status, 200);
  ExpectRefused("POST", "/v1/services", kWeb, 409, "Service already exists");
  ExpectRefused("POST", "/v1/services", R"({"protocol": "tcp", "address": "10.0.0.2:80",
      "lb_algo": "fastest"})",
                400, "Scheduler or persistence engine not found");
  ExpectRefused("POST", "/v1/services", R"({"protocol": "tcp", "address": "10.0.0.2:80",
      "server": [{"address": "1.1.1.1:80"}, {"address": "1.1.1.1:80"}]})",
                400, "Destination already exists");
  ExpectRefused("POST", "/v1/services", "not json", 400, "JSON object");
  ExpectRefused("POST", "/v1/services", R"({"protocol": "tcp", "address": "10.0.0.2:80",
      "colour": "red"})",
                400, "unknown key 'colour'");
  ExpectRefused("POST", "/v1/services/tcp/10.0.0.9:80/servers/1.1.1.1:80", "{}", 404,
                "Service not defined");
  ExpectRefused("POST", "/v1/services/tcp/10.0.0.1:80/servers/192.168.1.11:80", "{}", 409,
                "Destination already exists");
  ExpectRefused("PUT", "/v1/services/tcp/10.0.0.1:80/servers/192.168.1.99:80", R"({"weight": 1})",
                404, "No such destination");
  ExpectRefused("DELETE", "/v1/services/tcp/10.0.0.1:80/servers/192.168.1.99:80", "", 404,
                "No such destination");
  ExpectRefused("DELETE", "/v1/services/udp/10.0.0.1:80", "", 404, "No such service");
  ExpectRefused("PUT", "/v1/services/tcp/10.0.0.1:80/servers/192.168.1.11:80",
                R"({"weight": 70000})", 400, "weight");
  ExpectRefused("GET", "/v1/services/sctp/10.0.0.1:80", "", 400, "not tcp or udp");
  ExpectRefused("GET", "/v1/services/tcp/10.0.0.1", "", 400, "no port");
  ExpectRefused("GET", "/v1/services/tcp/10.0.0.1:80/peers/x", "", 404, "no such endpoint");
  ExpectRefused("PATCH", "/v1/services", "{}", 405, "not allowed");
  ExpectRefused("PUT", "/v1/services/tcp/10.0.0.1:80", R"({"address": "10.0.0.2:80"})", 400,
                "a key cannot change");
  ExpectRefused("POST", "/v1/services/restore", "-A -t 10.0.0.5:80\n-a -t 10.0.0.6:80 -r 1.1.1.1\n",
                404, "line 2: Service not defined");
}

TEST_F(ServiceRoutesTest, AFailedCommitChangesNothingAndSaysWhy) {
  editor_.fail_next = IoError("bind 10.0.0.1:80: Address already in use");
  net::HttpResponse r = Call("POST", "/v1/services", kWeb);
  EXPECT_EQ(r.status, 500);
  EXPECT_NE(r.body.find("Address already in use"), std::string::npos);
  EXPECT_TRUE(editor_.table().services().empty());
}

TEST_F(ServiceRoutesTest, PutIsAMergePatchOverTheService) {
  ASSERT_EQ(Call("POST", "/v1/services", kWeb).status, 200);
  auto r = Call("PUT", "/v1/services/tcp/10.0.0.1:80",
                R"({"lb_algo": "sh", "persistence_timeout": 600, "sorry_server": "10.0.0.9:80"})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(Saved(),
            "-A -t 10.0.0.1:80 -s sh -p 600\n"
            "-a -t 10.0.0.1:80 -r 192.168.1.11:80 -m -w 3\n"
            "-a -t 10.0.0.1:80 -r 192.168.1.12:8080 -m -w 1\n");
  // null removes a key (RFC 7396); the servers stay unless "server" is given.
  ASSERT_EQ(Call("PUT", "/v1/services/tcp%2F10.0.0.1%3A80",
                 R"({"persistence_timeout": null, "persistence_granularity": null})")
                .status,
            200);
  EXPECT_EQ(Saved().substr(0, Saved().find('\n')), "-A -t 10.0.0.1:80 -s sh");
  const auto& cfg = editor_.table().services().begin()->second.config;
  EXPECT_TRUE(cfg.sorry_server.has_value());
  ASSERT_EQ(Call("PUT", "/v1/services/tcp/10.0.0.1:80",
                 R"({"server": [{"address": "192.168.1.13:80", "lb_kind": "NAT"}]})")
                .status,
            200);
  EXPECT_EQ(Saved(),
            "-A -t 10.0.0.1:80 -s sh\n"
            "-a -t 10.0.0.1:80 -r 192.168.1.13:80 -m -w 1\n");
}

TEST_F(ServiceRoutesTest, ServerRoutesAddEditAndDeleteKeepingWhatThePatchLeavesOut) {
  ASSERT_EQ(Call("POST", "/v1/services", kWeb).status, 200);
  const std::string s12 = "/v1/services/tcp/10.0.0.1:80/servers/192.168.1.12:8080";
  ASSERT_EQ(Call("PUT", s12, R"({"weight": 0, "uthreshold": 100})").status, 200);
  const auto& dests = editor_.table().services().begin()->second.dests;
  const vservice::DestConfig& d = dests.rbegin()->second;
  EXPECT_EQ(d.weight, 0u);
  EXPECT_EQ(d.u_threshold, 100u);
  ASSERT_TRUE(d.check.has_value());  // the check was not in the patch: kept
  EXPECT_EQ(d.check->path, "/hz");
  ASSERT_EQ(Call("POST", "/v1/services/tcp/10.0.0.1:80/servers/192.168.1.14:80", "").status, 200);
  ASSERT_EQ(Call("DELETE", s12).status, 200);
  EXPECT_EQ(Saved(),
            "-A -t 10.0.0.1:80 -s rr\n"
            "-a -t 10.0.0.1:80 -r 192.168.1.11:80 -m -w 3\n"
            "-a -t 10.0.0.1:80 -r 192.168.1.14:80 -m -w 1\n");
  ExpectRefused("POST", "/v1/services/tcp/10.0.0.1:80/servers/192.168.1.15:80",
                R"({"address": "192.168.1.16:80"})", 400, "an address cannot change");
}

TEST_F(ServiceRoutesTest, Ipv6KeysPercentEncodedOrNot) {
  ASSERT_EQ(Call("POST", "/v1/services",
                 R"({"protocol": "udp", "address": "[2001:db8::1]:53", "lb_algo": "rr"})")
                .status,
            200);
  EXPECT_EQ(Call("GET", "/v1/services/udp%2F%5B2001%3Adb8%3A%3A1%5D%3A53").status, 200);
  EXPECT_EQ(Call("GET", "/v1/services/udp/[2001:db8::1]:53").status, 200);
  ASSERT_EQ(Call("POST", "/v1/services/udp/%5B2001:db8::1%5D:53/servers/%5B2001:db8::a%5D:53",
                 R"({"weight": 2})")
                .status,
            200);
  EXPECT_EQ(Saved(),
            "-A -u [2001:db8::1]:53 -s rr\n"
            "-a -u [2001:db8::1]:53 -r [2001:db8::a]:53 -m -w 2\n");
  ExpectRefused("GET", "/v1/services/udp%2", "", 400, "two hex digits");
}

// A file written by a real `ipvsadm -S -n` (ipvsadm.c's format strings) restores; restoring
// our own save keeps what the format cannot say (sorry server, checks, agent ids).
TEST_F(ServiceRoutesTest, SaveAndRestoreRoundTrip) {
  const std::string ipvsadm =
      "-A -t 10.0.0.1:80 -s wlc\n"
      "-a -t 10.0.0.1:80 -r 192.168.1.11:80 -m -w 1\n"
      "-a -t 10.0.0.1:80 -r 192.168.1.12:8080 -m -w 3\n"
      "-A -u 10.0.0.1:53 -s rr -o\n"
      "-a -u 10.0.0.1:53 -r 192.168.1.21:53 -m -w 1\n"
      "-A -t [2001:db8::80]:80 -s rr\n"
      "-a -t [2001:db8::80]:80 -r [2001:db8::a0a0]:80 -m -w 1\n";
  ASSERT_EQ(Call("POST", "/v1/services", kWeb).status, 200);
  Restore(ipvsadm);  // replaces: 10.0.0.1:80 is now wlc with other servers
  auto save = Call("GET", "/v1/services/save");
  EXPECT_EQ(save.content_type.rfind("text/plain", 0), 0u);
  EXPECT_EQ(save.body, ipvsadm);
  ASSERT_EQ(Call("PUT", "/v1/services/tcp/10.0.0.1:80",
                 R"({"sorry_server": "10.0.0.9:80", "server": [{"address": "192.168.1.11:80",
                     "agent": "rs1", "check": {"type": "TCP_CHECK"}}]})")
                .status,
            200);
  const vservice::VirtualServiceTable before = editor_.table();
  Restore(Call("GET", "/v1/services/save").body);
  EXPECT_TRUE(editor_.table() == before) << vservice::SaveRules(editor_.table());
  Restore("");  // an empty file is an empty table
  EXPECT_TRUE(editor_.table().services().empty());
}

TEST_F(ServiceRoutesTest, ClearAndZero) {
  ASSERT_EQ(Call("POST", "/v1/services", kWeb).status, 200);
  ASSERT_EQ(Call("POST", "/v1/services/zero", R"({"service": "tcp/10.0.0.1:80"})").status, 200);
  ASSERT_EQ(Call("POST", "/v1/services/zero", "").status, 200);
  ASSERT_EQ(editor_.zeroed.size(), 2u);
  EXPECT_TRUE(editor_.zeroed[0].has_value());
  EXPECT_FALSE(editor_.zeroed[1].has_value());
  ExpectRefused("POST", "/v1/services/zero", R"({"service": "tcp/10.0.0.2:80"})", 404,
                "No such service");
  auto r = Call("DELETE", "/v1/services");
  ASSERT_EQ(r.status, 200);
  EXPECT_TRUE(editor_.table().services().empty());
}

TEST_F(ServiceRoutesTest, RatesAndMetricsFollowTheRuntime) {
  ASSERT_EQ(Call("POST", "/v1/services", kWeb).status, 200);
  ServiceRuntime figures;
  figures.connections = 10;
  editor_.runtime_for = figures;
  DestRuntime dest;
  dest.connections = 4;
  dest.usable = true;
  dest.state = "UP";
  dest.active_conns = 2;
  dest.connect_failures = 4;
  dest.unreachable = 5;
  editor_.dest_runtime_for = dest;
  routes_.SampleRates();
  clock_.Advance(1s);
  figures.connections = 30;
  figures.flows_ended = 2;
  editor_.runtime_for = figures;
  routes_.SampleRates();
  json s = Body(Call("GET", "/v1/services"))["services"][0];
  EXPECT_DOUBLE_EQ(s["rates"]["cps"].get<double>(), 20.0);
  EXPECT_EQ(s["stats"]["conns"], 30);
  EXPECT_EQ(s["servers"][1]["active_conns"], 2);

  std::ostringstream o;
  WriteServiceMetrics(o, editor_.Runtime());
  const std::string m = o.str();
  EXPECT_NE(m.find("vsc_service_connections_total{service=\"tcp/10.0.0.1:80\"} 30\n"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("vsc_service_flows_ended_total{service=\"tcp/10.0.0.1:80\"} 2\n"),
            std::string::npos);
  EXPECT_NE(m.find("vsc_dest_active_connections{service=\"tcp/10.0.0.1:80\","
                   "server=\"192.168.1.12:8080\"} 2\n"),
            std::string::npos);
  EXPECT_NE(m.find("vsc_dest_up{service=\"tcp/10.0.0.1:80\",server=\"192.168.1.11:80\"} 1\n"),
            std::string::npos);
  EXPECT_NE(m.find("vsc_dest_weight{service=\"tcp/10.0.0.1:80\",server=\"192.168.1.11:80\"} 3\n"),
            std::string::npos);
  EXPECT_NE(m.find("vsc_dest_passive_failures_total{service=\"tcp/10.0.0.1:80\","
                   "server=\"192.168.1.12:8080\",reason=\"connect_failed\"} 4\n"),
            std::string::npos);
  EXPECT_NE(m.find("vsc_dest_passive_failures_total{service=\"tcp/10.0.0.1:80\","
                   "server=\"192.168.1.12:8080\",reason=\"port_unreachable\"} 5\n"),
            std::string::npos);
}

}  // namespace
}  // namespace vsc::director

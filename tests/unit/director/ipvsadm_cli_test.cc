// `vsc adm` with ipvsadm's options, end to end without sockets: ipvsadm's command line →
// ParseArgs → RequestFor → the /v1/services routes over an in-memory editor → the table, and
// the listing of a recorded answer in ipvsadm -L -n's format.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "common/clock.h"
#include "director/ipvsadm_request.h"
#include "director/service_listing.h"
#include "director/service_routes.h"
#include "fake_service_editor.h"
#include "vservice/ipvsadm_rules.h"

namespace vsc::director {
namespace {

using nlohmann::json;

std::vector<std::string> Words(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> w;
  for (std::string s; in >> s;) w.push_back(s);
  return w;
}

class IpvsadmCliTest : public ::testing::Test {
 protected:
  // Runs one `vsc adm ARGS` against the routes; returns the HTTP answer.
  net::HttpResponse Adm(const std::string& line, const std::string& rules = "") {
    auto cmd = vservice::ParseArgs(Words(line));
    EXPECT_TRUE(cmd.ok()) << line << ": " << cmd.status().message();
    if (!cmd.ok()) return {};
    auto req = RequestFor(*cmd, rules);
    EXPECT_TRUE(req.ok()) << req.status().message();
    if (!req.ok()) return {};
    net::HttpRequest http;
    http.method = req->method;
    http.path = req->target;
    http.target = req->target;
    http.body = req->body;
    return routes_.Handle(http);
  }
  void Ok(const std::string& line) {
    net::HttpResponse r = Adm(line);
    EXPECT_EQ(r.status, 200) << line << ": " << r.body;
  }
  std::string Saved() { return vservice::SaveRules(editor_.table()); }

  ManualClock clock_;
  FakeServiceEditor editor_;
  ServiceRoutes routes_{editor_, clock_};
};

TEST_F(IpvsadmCliTest, VerbsEditTheTableAsIpvsadmDoes) {
  Ok("-A -t 10.0.0.1:80 -s rr -p 600 -M 255.255.255.0");
  Ok("-a -t 10.0.0.1:80 -r 192.168.1.11:80 -m -w 3 -x 100 -y 50");
  Ok("--add-server --tcp-service 10.0.0.1:80 --real-server 192.168.1.12 --weight=2");
  Ok("-A -u [2001:db8::1]:53 -s sh -o");
  Ok("-a -u [2001:db8::1]:53 -r [2001:db8::a]:53 -g");
  EXPECT_EQ(Saved(),
            "-A -t 10.0.0.1:80 -s rr -p 600 -M 255.255.255.0\n"
            "-a -t 10.0.0.1:80 -r 192.168.1.11:80 -m -w 3 -x 100 -y 50\n"
            "-a -t 10.0.0.1:80 -r 192.168.1.12:80 -m -w 2\n"
            "-A -u [2001:db8::1]:53 -s sh -o\n"
            "-a -u [2001:db8::1]:53 -r [2001:db8::a]:53 -g -w 1\n");
  EXPECT_EQ(Adm("-S -n").body, Saved());

  // -E without -p turns persistence off and without -s means wlc, as in ipvsadm; the sorry
  // server (not expressible in ipvsadm) stays.
  ASSERT_EQ(routes_
                .Handle({"PUT",
                         "/v1/services/tcp/10.0.0.1:80",
                         "/v1/services/tcp/10.0.0.1:80",
                         "",
                         {},
                         R"({"sorry_server": "10.0.0.9:80"})"})
                .status,
            200);
  Ok("-E -t 10.0.0.1:80");
  // A commit replaces the table: look entries up again after each one.
  auto web = [this]() -> const vservice::VirtualService& {
    return editor_.table().services().begin()->second;
  };
  EXPECT_EQ(web().config.scheduler, "wlc");
  EXPECT_FALSE(web().config.persistence.has_value());
  EXPECT_TRUE(web().config.sorry_server.has_value());
  Ok("-E -u [2001:db8::1]:53 -s rr");
  EXPECT_NE(Saved().find("-A -u [2001:db8::1]:53 -s rr\n"), std::string::npos) << "ops cleared";

  // -e without -w sets weight 1 and clears the thresholds; the check stays.
  ASSERT_EQ(routes_
                .Handle({"PUT",
                         "",
                         "/v1/services/tcp/10.0.0.1:80/servers/192.168.1.11:80",
                         "",
                         {},
                         R"({"check": {"type": "TCP_CHECK"}})"})
                .status,
            200);
  Ok("-e -t 10.0.0.1:80 -r 192.168.1.11:80");
  const vservice::DestConfig& d = web().dests.begin()->second;
  EXPECT_EQ(d.weight, 1u);
  EXPECT_EQ(d.u_threshold, 0u);
  EXPECT_TRUE(d.check.has_value());

  Ok("-d -t 10.0.0.1:80 -r 192.168.1.12:80");
  Ok("-D -u [2001:db8::1]:53");
  EXPECT_EQ(Saved(),
            "-A -t 10.0.0.1:80 -s wlc\n"
            "-a -t 10.0.0.1:80 -r 192.168.1.11:80 -m -w 1\n");
  Ok("-Z -t 10.0.0.1:80");
  ASSERT_EQ(editor_.zeroed.size(), 1u);
  Ok("-C");
  EXPECT_EQ(Saved(), "");
}

TEST_F(IpvsadmCliTest, RefusalsCarryIpvsadmText) {
  Ok("-A -t 10.0.0.1:80");
  auto r = Adm("-A -t 10.0.0.1:80");
  EXPECT_EQ(r.status, 409);
  EXPECT_NE(r.body.find("Service already exists"), std::string::npos);
  r = Adm("-a -t 10.0.0.2:80 -r 1.1.1.1:80");
  EXPECT_EQ(r.status, 404);
  EXPECT_NE(r.body.find("Service not defined"), std::string::npos);
  r = Adm("-d -t 10.0.0.1:80 -r 1.1.1.1:80");
  EXPECT_NE(r.body.find("No such destination"), std::string::npos);
}

// ipvsadm --set keeps a value given as 0; -L --timeout prints what holds now; a bad value
// changes nothing.
TEST_F(IpvsadmCliTest, SetTimeoutsKeepsZerosAndListTimeoutShowsThem) {
  net::HttpResponse r = Adm("-L --timeout");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(RenderTimeouts(json::parse(r.body)), "Timeout (tcp tcpfin udp): 900 120 300\n");
  Ok("--set 0 30 7");
  r = Adm("-L --timeout");
  EXPECT_EQ(RenderTimeouts(json::parse(r.body)), "Timeout (tcp tcpfin udp): 900 30 7\n");
  EXPECT_EQ(editor_.Timeouts().udp, std::chrono::seconds(7));

  net::HttpRequest bad;
  bad.method = "PUT";
  bad.path = bad.target = "/v1/services/timeouts";
  bad.body = R"({"tcp": 60, "udp": -1})";
  r = routes_.Handle(bad);
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(r.body.find("invalid timeout value `-1' specified for udp"), std::string::npos);
  EXPECT_EQ(editor_.Timeouts().tcp, std::chrono::seconds(900));  // nothing changed
}

TEST(IpvsadmListArgs, ConnectionsAndTimeoutsAreListModesOfTheirOwn) {
  auto conns = vservice::ParseArgs(Words("-L -n -c"));
  ASSERT_TRUE(conns.ok());
  auto req = RequestFor(*conns);
  ASSERT_TRUE(req.ok());
  EXPECT_EQ(req->method + " " + req->target, "GET /v1/services/connections");
  for (const char* line : {"-L -c --timeout", "-L --timeout -t 10.0.0.1:80", "-L -c --stats"}) {
    auto bad = vservice::ParseArgs(Words(line));
    EXPECT_FALSE(bad.ok()) << line;
  }
}

// GET /v1/services/connections sorted and rendered as ipvsadm -L -c -n prints IPVS entries.
TEST(ServiceListingTest, RendersConnectionEntriesAsIpvsadm) {
  using vservice::AddrPort;
  auto ap = [](const char* text) {
    auto p = vservice::ParseAddrPort(text);
    return AddrPort{p->addr, *p->port};
  };
  ServiceEditor::FlowList list;
  list.entries.push_back({vservice::Proto::kUdp, "UDP", ap("10.0.0.6:5353"), ap("192.168.0.100:53"),
                          ap("192.168.1.12:53"), std::chrono::milliseconds(299400)});
  list.entries.push_back({vservice::Proto::kTcp, "ESTABLISHED", ap("10.0.0.5:51922"),
                          ap("192.168.0.100:80"), ap("192.168.1.11:80"),
                          std::chrono::seconds(899)});
  const json j = FlowsJson(list);
  EXPECT_EQ(j["connections"][0]["protocol"], "TCP");  // sorted: TCP before UDP
  EXPECT_EQ(RenderConnections(j),
            "IPVS connection entries\n"
            "pro expire state       source             virtual            destination\n"
            "TCP 14:59  ESTABLISHED 10.0.0.5:51922     192.168.0.100:80   192.168.1.11:80\n"
            "UDP 04:59  UDP         10.0.0.6:5353      192.168.0.100:53   192.168.1.12:53\n");
  list.truncated = true;
  EXPECT_NE(RenderConnections(FlowsJson(list)).find("truncated"), std::string::npos);
}

TEST_F(IpvsadmCliTest, RestoreReadsAFileSavedByIpvsadm) {
  const std::string file =
      "-A -t 10.0.0.1:80 -s wlc\n"
      "-a -t 10.0.0.1:80 -r 192.168.1.11:80 -m -w 1\n"
      "-A -u 10.0.0.1:53 -s rr -o\n"
      "-a -u 10.0.0.1:53 -r 192.168.1.21:53 -m -w 1\n";
  Ok("-A -t 10.0.0.7:80");  // replaced by the restore
  ASSERT_EQ(Adm("-R", file).status, 200);
  EXPECT_EQ(Saved(), file);
  EXPECT_EQ(Adm("-R", "-A -t 10.0.0.1:80 -s nosuch\n").status, 400);
  EXPECT_EQ(Saved(), file) << "a refused restore changed the table";
}

// The listing of a recorded answer, byte for byte: ipvsadm's columns, the id beside the
// address, state and check on the right; --stats with K above 10^8; --exact in full.
TEST(ServiceListingTest, RendersIpvsadmFormat) {
  const json answer = json::parse(R"({"services": [{
    "key": "tcp/10.0.0.1:80",
    "config": {"protocol": "tcp", "address": "10.0.0.1:80", "lb_algo": "wlc",
               "persistence_timeout": 360, "persistence_granularity": "255.255.255.0",
               "server": [{"address": "192.168.1.11:80", "lb_kind": "NAT", "weight": 3},
                          {"address": "192.168.1.12:80", "lb_kind": "NAT", "weight": 0}]},
    "stats": {"conns": 1234, "in_packets": 123456789, "out_packets": 0, "in_bytes": 5,
              "out_bytes": 0},
    "rates": {"cps": 10.4, "in_pps": 0, "out_pps": 0, "in_bps": 0, "out_bps": 0},
    "servers": [{"address": "192.168.1.11:80", "server_id": "rs1", "state": "UP",
                 "check_result": "ok: connected", "active_conns": 12, "inactive_conns": 40,
                 "stats": {"conns": 617, "in_packets": 1, "out_packets": 0, "in_bytes": 0,
                           "out_bytes": 0},
                 "rates": {"cps": 5, "in_pps": 0, "out_pps": 0, "in_bps": 0, "out_bps": 0}}]},
   {"key": "udp/[::1]:53",
    "config": {"protocol": "udp", "address": "[::1]:53", "lb_algo": "rr",
               "persistence_timeout": 60, "persistence_granularity": "128", "ops": true},
    "stats": {"conns": 0, "in_packets": 0, "out_packets": 0, "in_bytes": 0, "out_bytes": 0},
    "rates": {"cps": 0, "in_pps": 0, "out_pps": 0, "in_bps": 0, "out_bps": 0},
    "servers": []}]})");
  EXPECT_EQ(RenderServices(answer, {.numeric = true}),
            "IP Virtual Server (vscluster user-space director)\n"
            "Prot LocalAddress:Port Scheduler Flags\n"
            "  -> RemoteAddress:Port           Forward Weight ActiveConn InActConn State Check\n"
            "TCP  10.0.0.1:80 wlc persistent 360 mask 255.255.255.0\n"
            "  -> 192.168.1.11:80 (rs1)        Masq    3      12         40         UP ok: "
            "connected\n"
            "  -> 192.168.1.12:80              Masq    0      0          0         \n"
            "UDP  [::1]:53 rr persistent 60 ops\n");
  EXPECT_EQ(RenderServices(answer, {.numeric = true, .stats = true}),
            "IP Virtual Server (vscluster user-space director)\n"
            "Prot LocalAddress:Port               Conns   InPkts  OutPkts  InBytes OutBytes\n"
            "  -> RemoteAddress:Port\n"
            "TCP  10.0.0.1:80                      1234  123456K        0        5        0\n"
            "  -> 192.168.1.11:80 (rs1)             617        1        0        0        0\n"
            "  -> 192.168.1.12:80                     0        0        0        0        0\n"
            "UDP  [::1]:53                            0        0        0        0        0\n");
  const std::string exact = RenderServices(answer, {.stats = true, .exact = true});
  EXPECT_NE(exact.find("TCP  10.0.0.1:80                      1234 123456789        0"),
            std::string::npos)
      << exact;
  const std::string rate = RenderServices(answer, {.rate = true});
  EXPECT_NE(rate.find("TCP  10.0.0.1:80                        10        0"), std::string::npos)
      << rate;
  EXPECT_EQ(LargeNum(99999999, false), " 99999999");
  EXPECT_EQ(LargeNum(100000000, false), "  100000K");
  EXPECT_EQ(LargeNum(123456789012, false), "     123G");
}

}  // namespace
}  // namespace vsc::director

// The admin API's bearer-token check over every route: each request without the right token is
// answered 401 with `WWW-Authenticate: Bearer` and changes nothing; the right token reaches the
// route (and a mutating route then takes effect).
#include "director/admin_api.h"

#include <gtest/gtest.h>

#include <asio/io_context.hpp>
#include <chrono>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "fake_service_editor.h"
#include "vservice/ipvsadm_rules.h"

namespace vsc::director {
namespace {

using namespace std::chrono_literals;

constexpr char kToken[] = "s3cret-admin-token";

proto::Register MakeRegister(const std::string& id, uint16_t port) {
  proto::Register r;
  r.set_id(id);
  r.set_incarnation(1);
  r.set_weight(1);
  auto* e = r.add_endpoints();
  e->set_service("lookup-udp");
  e->set_host("127.0.0.1");
  e->set_port(port);
  return r;
}

struct Route {
  std::string method;
  std::string path;
  std::string body;
  bool mutates;  // the right token must change the director's state
};

// Every route of admin_api.h, each with a body that the right token makes succeed.
std::vector<Route> AllRoutes() {
  return {
      {"GET", "/v1/status", "", false},
      {"GET", "/metrics", "", false},
      {"GET", "/v1/replication", "", false},
      {"GET", "/v1/verify/1", "", false},
      {"POST", "/v1/verify", "", false},  // replication is off here: 409, nothing sequenced
      {"POST", "/v1/scheduler", R"({"scheduler": "rr"})", true},
      {"POST", "/v1/persistence", R"({"timeout_s": 360, "netmask": "255.255.255.0"})", true},
      {"POST", "/v1/servers/rs1/weight", R"({"weight": 9})", true},
      {"POST", "/v1/servers/rs2/drain", "", true},
      {"POST", "/v1/servers/rs3/remove", "", true},
      {"GET", "/v1/services", "", false},
      {"GET", "/v1/services/save", "", false},
      {"GET", "/v1/services/tcp/10.0.0.1:80", "", false},
      {"POST", "/v1/services", R"({"protocol": "tcp", "address": "10.0.0.2:80"})", true},
      {"PUT", "/v1/services/tcp/10.0.0.1:80", R"({"lb_algo": "rr"})", true},
      {"POST", "/v1/services/tcp/10.0.0.1:80/servers/192.168.1.3:80", R"({"weight": 2})", true},
      {"PUT", "/v1/services/tcp/10.0.0.1:80/servers/192.168.1.1:80", R"({"weight": 5})", true},
      {"DELETE", "/v1/services/tcp/10.0.0.1:80/servers/192.168.1.2:80", "", true},
      {"DELETE", "/v1/services/tcp%2F10.0.0.3%3A80", "", true},
      {"POST", "/v1/services/zero", "{}", true},
      {"POST", "/v1/services/restore", "-A -t 10.0.0.9:80 -s rr\n", true},
      {"DELETE", "/v1/services", "", true},
      {"GET", "/no/such/route", "", false},
  };
}

// The credentials a client may send; nullopt sends no Authorization header at all.
const std::vector<std::optional<std::string>> kWrongCredentials = {
    std::nullopt,
    "",
    "Bearer",
    "Bearer ",
    "Bearer wrong-token",
    std::string("Bearer ") + kToken + "x",
    std::string("Bearer ") + std::string(kToken).substr(1),
    std::string("bearer ") + kToken,  // the scheme and token compare exactly
    std::string("Basic ") + kToken,
    "Basic YWRtaW46czNjcmV0LWFkbWluLXRva2Vu",  // admin:s3cret-admin-token
    kToken,                                    // the token without a scheme
};

class AdminApiAuthTest : public ::testing::Test {
 protected:
  AdminApiAuthTest() {
    // rs1 ACTIVE (weight), rs2 ACTIVE (drain), rs3 DRAINING (remove).
    uint64_t session = 0;
    for (const char* id : {"rs1", "rs2", "rs3"}) {
      EXPECT_TRUE(
          plane_.OnRegister(MakeRegister(id, 7001), ++session, 7101, clock_.Now()).accepted());
      proto::Heartbeat hb;
      hb.set_id(id);
      hb.set_incarnation(1);
      hb.set_counter(1);
      plane_.OnHeartbeat(hb, clock_.Now());
    }
    EXPECT_TRUE(plane_.Drain("rs3", clock_.Now()).ok());
    control_.PublishIfNeeded(/*force=*/true);
    vservice::VirtualServiceTable services;
    EXPECT_TRUE(vservice::RestoreRules(services,
                                       "-A -t 10.0.0.1:80 -s wlc\n"
                                       "-a -t 10.0.0.1:80 -r 192.168.1.1:80 -m -w 1\n"
                                       "-a -t 10.0.0.1:80 -r 192.168.1.2:80 -m -w 1\n"
                                       "-A -t 10.0.0.3:80 -s rr\n"
                                       // the built-in lookup entries (listen:lookup_port)
                                       "-A -u 127.0.0.1:7000 -s wlc\n"
                                       "-A -t 127.0.0.1:7000 -s wlc\n")
                    .ok());
    EXPECT_TRUE(services_.Commit(services).ok());
    api_.SetServices(&services_);
  }

  net::HttpResponse Send(const Route& route, const std::optional<std::string>& credentials) {
    net::HttpRequest req;
    req.method = route.method;
    req.target = route.path;
    req.path = route.path;
    req.body = route.body;
    if (credentials) req.headers.emplace_back("Authorization", *credentials);
    return api_.Handle(req);
  }

  // Everything an admin request could change, as text.
  std::string State() {
    std::ostringstream o;
    for (const char* id : {"rs1", "rs2", "rs3"}) {
      const membership::ServerRecord* rec = plane_.membership().Find(id);
      o << " " << id << "=";
      if (rec == nullptr) {
        o << "gone";
        continue;
      }
      o << membership::StateName(rec->state) << "/" << rec->weight;
    }
    o << " published=" << published_ << " services=" << vservice::SaveRules(services_.table())
      << " zeroed=" << services_.zeroed.size();
    return o.str();
  }

  ManualClock clock_;
  asio::io_context io_;
  ControlPlane plane_{membership::Config{100ms, 2, 5}, ControlSettings{}};
  proto::ClusterKey key_ = proto::ClusterKey::FromHex(std::string(64, 'a')).value();
  int published_ = 0;
  ControlServer control_{io_, plane_, key_, clock_, [this](ViewPtr) { ++published_; }};
  FakeServiceEditor services_;
  DirectorConfig config_;
  AdminApi api_{plane_, control_, config_, clock_, kToken, 7000};
};

TEST_F(AdminApiAuthTest, EveryRouteRefusesEveryWrongCredentialAndChangesNothing) {
  const std::string before = State();
  for (const Route& route : AllRoutes()) {
    for (const auto& credentials : kWrongCredentials) {
      SCOPED_TRACE(route.method + " " + route.path +
                   " with Authorization: " + (credentials ? "'" + *credentials + "'" : "(none)"));
      net::HttpResponse r = Send(route, credentials);
      EXPECT_EQ(r.status, 401);
      EXPECT_EQ(r.Header("WWW-Authenticate"), "Bearer");
      EXPECT_NE(r.body.find("bearer token"), std::string::npos) << r.body;
      EXPECT_EQ(State(), before) << "a refused request changed the director";
    }
  }
}

TEST_F(AdminApiAuthTest, TheRightTokenReachesEveryRoute) {
  const std::string right = std::string("Bearer ") + kToken;
  for (const Route& route : AllRoutes()) {
    SCOPED_TRACE(route.method + " " + route.path);
    const std::string before = State();
    net::HttpResponse r = Send(route, right);
    EXPECT_NE(r.status, 401) << r.body;
    EXPECT_TRUE(r.Header("WWW-Authenticate").empty());
    if (route.mutates) {
      EXPECT_EQ(r.status, 200) << r.body;
      EXPECT_NE(State(), before) << "the request had no effect";
      const vservice::ServiceKey lookup{vservice::Proto::kUdp, vservice::IpAddress::V4(0x7f000001),
                                        7000};
      if (route.path == "/v1/scheduler") {
        EXPECT_EQ(services_.table().Find(lookup)->config.scheduler, "rr");
      }
      if (route.path == "/v1/persistence") {
        EXPECT_EQ(services_.table().Find(lookup)->config.persistence,
                  (vservice::Persistence{360, 24}));
      }
    } else {
      EXPECT_EQ(State(), before);
    }
  }
  EXPECT_EQ(Send({"GET", "/no/such/route", "", false}, right).status, 404);
  EXPECT_EQ(plane_.membership().Find("rs1")->weight, 9u);
  EXPECT_EQ(plane_.membership().Find("rs2")->state, membership::State::kDraining);
  EXPECT_EQ(plane_.membership().Find("rs3"), nullptr);  // removed servers are forgotten
  EXPECT_TRUE(services_.table().services().empty());    // the last route flushed them
}

}  // namespace
}  // namespace vsc::director

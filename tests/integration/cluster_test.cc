// The core cluster end to end: a director and 3 real servers as processes on 127.0.0.1.
// Registration, lookups through `dr` (UDP) and the TCP proxy, HTTP on a real server, failure
// detection (crash: session loss; hang: missed heartbeats), re-join, drain and remove, and
// runtime weight and scheduler changes. Shares are counted from who actually answered (the
// answer's source port) and cross-checked against the director's own counters.
#include <signal.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "client/tcp_lookup_client.h"
#include "common/random.h"
#include "common/subprocess.h"
#include "integration/cluster_harness.h"
#include "net/http_client.h"

namespace vsc::integration {
namespace {

using namespace std::chrono_literals;
using json = nlohmann::json;

double Ms(Duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

bool StartsWith(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

// An admin request the director refused with `http_status` and a message saying `why` (not a
// transport failure or another refusal passing for this one).
void ExpectRefused(const Result<json>& r, int http_status, const std::string& why) {
  ASSERT_FALSE(r.ok()) << "accepted: " << r->dump();
  EXPECT_EQ(r.status().code(), Code::kFailedPrecondition) << r.status().ToString();
  EXPECT_NE(r.status().message().find(": HTTP " + std::to_string(http_status) + " "),
            std::string::npos)
      << r.status().message();
  EXPECT_NE(r.status().message().find(why), std::string::npos) << r.status().message();
}

// ---- 1. Registration ----

TEST_F(ClusterTest, RegistrationListsEveryServerActiveInBothServices) {
  ASSERT_NO_FATAL_FAILURE(StartCluster());
  const json st = AdminStatus();
  ASSERT_EQ(st.at("services").size(), 2u);
  EXPECT_EQ(st["services"][0]["protocol"], "UDP");
  EXPECT_EQ(st["services"][1]["protocol"], "TCP");
  for (int svc = 0; svc < 2; ++svc) {
    EXPECT_EQ(st["services"][svc]["servers"].size(), static_cast<size_t>(kServers));
    for (int i = 0; i < kServers; ++i) {
      const json* s = FindServer(st, svc, cluster_->server_id(i));
      ASSERT_NE(s, nullptr) << cluster_->server_id(i) << " not listed in service " << svc;
      EXPECT_EQ((*s)["state"], "ACTIVE");
      EXPECT_EQ((*s)["forward"], svc == 0 ? "Route" : "Masq");
      EXPECT_EQ((*s)["address"], "127.0.0.1:" + std::to_string(cluster_->server_lookup_port(i)));
    }
  }
  // Each server was seen registering, then its first heartbeat made it ACTIVE.
  EXPECT_EQ(Transitions("REMOVED", "JOINING"), kServers);
  EXPECT_EQ(Transitions("JOINING", "ACTIVE"), kServers);
  EXPECT_EQ(Metric("vsc_control_sessions"), kServers);

  const std::string token_file = work_dir_ + "/director-admin.token";
  auto [code, out] = RunAdm(work_dir_, cluster_->admin_port(), token_file, {"list"});
  ASSERT_EQ(code, 0) << out;
  const std::vector<std::string> lines = Lines(out);
  const std::string vip = "127.0.0.1:" + std::to_string(cluster_->lookup_port());
  auto find = [&](const std::string& prefix) {
    for (size_t i = 0; i < lines.size(); ++i) {
      if (StartsWith(lines[i], prefix)) return static_cast<int>(i);
    }
    return -1;
  };
  EXPECT_GE(find("Prot LocalAddress:Port Scheduler Flags"), 0) << out;
  EXPECT_GE(find("  -> RemoteAddress:Port           Forward Weight ActiveConn InActConn"), 0)
      << out;
  const int udp = find("UDP  " + vip + " rr");
  const int tcp = find("TCP  " + vip + " rr");
  ASSERT_GE(udp, 0) << out;
  ASSERT_GT(tcp, udp) << out;
  for (int i = 0; i < kServers; ++i) {
    const std::string row =
        "  -> 127.0.0.1:" + std::to_string(cluster_->server_lookup_port(i)) + " ";
    int route = 0, masq = 0;
    for (int l = 0; l < static_cast<int>(lines.size()); ++l) {
      if (!StartsWith(lines[l], row)) continue;
      std::istringstream fields(lines[l].substr(4));
      std::string address, forward, weight, active, inactive, state;
      fields >> address >> forward >> weight >> active >> inactive >> state;
      EXPECT_EQ(state, "ACTIVE") << lines[l];
      EXPECT_EQ(weight, "1") << lines[l];
      if (forward == "Route" && l > udp && l < tcp) ++route;
      if (forward == "Masq" && l > tcp) ++masq;
    }
    EXPECT_EQ(route, 1) << "server " << i << " UDP row\n" << out;
    EXPECT_EQ(masq, 1) << "server " << i << " TCP row\n" << out;
  }

  // A wrong token is refused by the director (HTTP 401), and adm says so with exit code 1 — not
  // any failure (a crash, a missing file, an unreachable director) passing for a refusal.
  const std::string bad_token = work_dir_ + "/wrong.token";
  std::ofstream(bad_token) << "not-the-token\n";
  auto [bad_code, bad_out] = RunAdm(work_dir_, cluster_->admin_port(), bad_token, {"list"});
  EXPECT_EQ(bad_code, 1) << bad_out;
  EXPECT_NE(bad_out.find("missing or wrong bearer token"), std::string::npos) << bad_out;
  EXPECT_NE(bad_out.find("(HTTP 401)"), std::string::npos) << bad_out;
  EXPECT_EQ(bad_out.find("ACTIVE"), std::string::npos) << bad_out;
}

// ---- 2. Lookups through dr ----

TEST_F(ClusterTest, UdpLookupsAreAnsweredDirectlyByRealServers) {
  ASSERT_NO_FATAL_FAILURE(StartCluster());
  const Oracle& oracle = SharedOracle();
  auto probe = UdpProbe::Open();
  ASSERT_TRUE(probe.ok());
  const std::vector<uint64_t> ids = {1, 2, kRecords, kRecords + 1, 7777};
  ASSERT_TRUE(probe->SendTo(cluster_->lookup_port(), EncodeLookup(42, ids)).ok());
  auto answer = probe->ReceiveAnswerTo(42, 2s);
  ASSERT_TRUE(answer.has_value()) << "no answer to request 42 through the director";
  EXPECT_NE(answer->from_port, cluster_->lookup_port()) << "the director answered itself";
  EXPECT_GE(ServerIndexByPort(answer->from_port), 0)
      << "answer from port " << answer->from_port << ", which is no real server's";
  auto response = proto::DecodeResponse(answer->bytes);
  ASSERT_TRUE(response.ok()) << response.status().ToString();
  EXPECT_EQ(response->request_id, 42u);
  EXPECT_EQ(response->status, proto::LookupStatus::kOk);
  EXPECT_TRUE(oracle.Matches(ids, response->answers));
  EXPECT_FALSE(response->answers[3].found);

  const json before = AdminStatus();
  const double forwarded_before = Metric("vsc_datagrams_forwarded_total");
  constexpr int kRequests = 300;
  std::vector<int> per_server = UdpRoundTrips(kRequests, 2);
  const json after = AdminStatus();
  int total = 0;
  for (int i = 0; i < kServers; ++i) {
    total += per_server[i];
    // rr over 3 servers: strictly one in three each.
    EXPECT_EQ(per_server[i], kRequests / kServers) << cluster_->server_id(i);
    EXPECT_EQ(ServerConns(after, 0, cluster_->server_id(i)) -
                  ServerConns(before, 0, cluster_->server_id(i)),
              static_cast<uint64_t>(per_server[i]))
        << "director's count for " << cluster_->server_id(i);
  }
  EXPECT_EQ(total, kRequests);
  EXPECT_EQ(Metric("vsc_datagrams_forwarded_total") - forwarded_before, kRequests);
  // dr: no reply ever passes through the director.
  EXPECT_EQ(Metric("vsc_replies_seen_total"), 0);
  EXPECT_EQ(after["services"][0]["stats"]["out_packets"], 0);
}

// ---- 3. TCP through the director, HTTP on a real server ----

TEST_F(ClusterTest, TcpLookupsThroughDirectorAndHttpOnRealServers) {
  ASSERT_NO_FATAL_FAILURE(StartCluster());
  const Oracle& oracle = SharedOracle();
  const json before = AdminStatus();
  constexpr int kConnections = 6;
  Random random(3);
  for (int c = 0; c < kConnections; ++c) {
    auto client = client::TcpLookupClient::Connect("127.0.0.1", cluster_->lookup_port(), 2s);
    ASSERT_TRUE(client.ok()) << client.status().ToString();
    for (int r = 0; r < 20; ++r) {
      std::vector<uint64_t> ids;
      const size_t n = 1 + random.Uniform(proto::kMaxLookupIds);
      for (size_t k = 0; k < n; ++k) ids.push_back(1 + random.Uniform(kRecords + 2000));
      auto answers = client->Lookup(ids);
      ASSERT_TRUE(answers.ok()) << answers.status().ToString();
      EXPECT_TRUE(oracle.Matches(ids, *answers)) << "connection " << c << " request " << r;
    }
    const std::vector<uint64_t> unknown = {0, kRecords + 1, UINT64_MAX};
    auto answers = client->Lookup(unknown);
    ASSERT_TRUE(answers.ok()) << answers.status().ToString();
    for (const auto& a : *answers) EXPECT_FALSE(a.found) << a.id;
  }
  const json after = AdminStatus();
  // rr: each server got two of the six connections.
  for (int i = 0; i < kServers; ++i) {
    EXPECT_EQ(ServerConns(after, 1, cluster_->server_id(i)) -
                  ServerConns(before, 1, cluster_->server_id(i)),
              static_cast<uint64_t>(kConnections / kServers))
        << cluster_->server_id(i);
  }
  EXPECT_EQ(Metric("vsc_tcp_connections_total"), kConnections);

  for (int i = 0; i < kServers; ++i) {
    const std::vector<uint64_t> ids = {1, 2, 3, kRecords, kRecords + 1};
    auto r = net::HttpRequestSync("127.0.0.1", cluster_->server_http_port(i), "GET",
                                  "/v1/resources/1,2,3,20000,20001", "", {}, 2s);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ASSERT_EQ(r->status, 200) << r->body;
    json body = json::parse(r->body);
    ASSERT_EQ(body["resources"].size(), ids.size()) << r->body;
    for (size_t k = 0; k < ids.size(); ++k) {
      const proto::LookupAnswer want = oracle.Expect(ids[k]);
      const json& got = body["resources"][k];
      EXPECT_EQ(got["id"], ids[k]);
      EXPECT_EQ(got["found"], want.found) << r->body;
      if (want.found) {
        EXPECT_EQ(got["node"], want.node);
      } else {
        EXPECT_FALSE(got.contains("node"));
      }
    }
    auto bad = net::HttpRequestSync("127.0.0.1", cluster_->server_http_port(i), "GET",
                                    "/v1/resources/1,2,x", "", {}, 2s);
    ASSERT_TRUE(bad.ok());
    EXPECT_EQ(bad->status, 400) << bad->body;
    auto eleven = net::HttpRequestSync("127.0.0.1", cluster_->server_http_port(i), "GET",
                                       "/v1/resources/1,2,3,4,5,6,7,8,9,10,11", "", {}, 2s);
    ASSERT_TRUE(eleven.ok());
    EXPECT_EQ(eleven->status, 400) << eleven->body;
  }
}

// With every server drained, the TCP path has no server: the director accepts the connection,
// closes it without connecting anywhere, and counts it; no server sees a connection.
TEST_F(ClusterTest, TcpLookupWithNoServerUpIsClosedAndCounted) {
  ASSERT_NO_FATAL_FAILURE(StartCluster());
  for (int i = 0; i < kServers; ++i) {
    auto r =
        cluster_->AdminPost("/v1/servers/" + cluster_->server_id(i) + "/drain", json::object());
    ASSERT_TRUE(r.ok()) << r.status().ToString();
  }
  const std::string no_server = "vsc_tcp_refused_total{reason=\"no_server\"}";
  const double refused = Metric(no_server);
  const json before = AdminStatus();
  auto client = client::TcpLookupClient::Connect("127.0.0.1", cluster_->lookup_port(), 2s);
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  auto answers = client->Lookup(std::vector<uint64_t>{1});
  ASSERT_FALSE(answers.ok()) << "answered with every server drained";
  EXPECT_EQ(answers.status().code(), Code::kUnavailable) << answers.status().ToString();
  EXPECT_TRUE(WaitUntil([&] { return Metric(no_server) >= refused + 1; }, 2s))
      << no_server << " did not count the connection";
  const json after = AdminStatus();
  for (int i = 0; i < kServers; ++i) {
    EXPECT_EQ(ServerConns(after, 1, cluster_->server_id(i)),
              ServerConns(before, 1, cluster_->server_id(i)))
        << cluster_->server_id(i) << " got a TCP connection";
  }
}

// ---- 4 and 5. Failure detection and re-join ----

// Requests answered later than this are lost for the purpose of these tests (a Debug build
// answers in a few milliseconds; a stopped server answers its queue only once resumed).
constexpr Duration kPatience = 250ms;

TEST_F(ClusterTest, KilledServerIsDownAtOnceAndRejoinsWhenRestarted) {
  ASSERT_NO_FATAL_FAILURE(StartCluster());
  PacedUdpLoad load(cluster_->lookup_port(), 2ms, 4);
  ASSERT_TRUE(load.Start().ok());
  ASSERT_TRUE(WaitUntil([&] { return load.sent() >= 100; }, 5s));

  // On a loaded machine rs2 may be SILENT for a moment when it is killed (100 ms heartbeats), so
  // the one transition to DOWN may come from either state.
  auto to_down = [&] { return Transitions("ACTIVE", "DOWN") + Transitions("SILENT", "DOWN"); };
  const double into_down = to_down();
  const TimePoint killed = clock_.Now();
  ASSERT_TRUE(cluster_->SignalServer(1, SIGKILL).ok());
  ASSERT_TRUE(WaitForState("rs2", "DOWN", 3s));
  const TimePoint down_seen = clock_.Now();
  const size_t sent_at_down = load.sent();
  ASSERT_TRUE(WaitUntil([&] { return load.sent() >= sent_at_down + 150; }, 5s));

  // The closed control session told the director at once: one transition into DOWN.
  // (A missed-heartbeat timeout takes an ACTIVE server through SILENT; another server may flap
  // ACTIVE -> SILENT -> ACTIVE on a loaded machine, so SILENT counts prove nothing here.)
  EXPECT_EQ(to_down() - into_down, 1);
  // Missed heartbeats could make it DOWN no sooner than (N - 1) periods after the kill (its last
  // heartbeat was at most one period earlier): seeing DOWN before that proves the session close.
  const Duration heartbeat_down = (kDownAfter - 1) * std::chrono::milliseconds(kHeartbeatMs);
  EXPECT_LT(down_seen - killed, heartbeat_down)
      << "a crashed server must be DOWN sooner than missed heartbeats could make it";

  const TimePoint restart = clock_.Now();
  Status s = cluster_->RestartServer(1);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_TRUE(WaitForState("rs2", "ACTIVE", 5s));
  const TimePoint active_again = clock_.Now();
  const size_t sent_at_active = load.sent();
  ASSERT_TRUE(WaitUntil([&] { return load.sent() >= sent_at_active + 150; }, 5s));
  load.Stop(1s);

  size_t wrong = 0, rejoined = 0;
  for (const auto& r : load.records()) {
    if (r.answered && !r.correct) ++wrong;
    if (r.answered && r.sent > active_again && ServerIndexByPort(r.from_port) == 1) ++rejoined;
  }
  EXPECT_EQ(wrong, 0u);
  const size_t lost_window = load.CountSent(killed - 50ms, down_seen, kPatience);
  const size_t lost_after = load.CountSent(down_seen, std::nullopt, kPatience);
  std::printf(
      "[ measure  ] kill -9: DOWN seen after %.1f ms; %zu of %zu requests lost in the "
      "detection window, %zu of %zu after; restart to ACTIVE %.1f ms\n",
      Ms(down_seen - killed), lost_window, load.CountSent(killed - 50ms, down_seen), lost_after,
      load.CountSent(down_seen, std::nullopt), Ms(active_again - restart));
  EXPECT_EQ(lost_after, 0u) << "requests were lost after the crash was detected";
  EXPECT_LE(lost_window, load.CountSent(killed - 50ms, down_seen) / kServers + 2);
  // The restarted server (same ports, new incarnation) takes its share again.
  EXPECT_GE(rejoined, 150u / kServers - 10) << "rs2 got no requests after it re-joined";
  EXPECT_EQ(Transitions("DOWN", "JOINING"), 1);
}

TEST_F(ClusterTest, HungServerTurnsSilentThenDownOnScheduleAndRejoinsWhenResumed) {
  ASSERT_NO_FATAL_FAILURE(StartCluster());
  const Duration period = std::chrono::milliseconds(kHeartbeatMs);
  PacedUdpLoad load(cluster_->lookup_port(), 2ms, 5);
  ASSERT_TRUE(load.Start().ok());

  struct Poll {
    TimePoint before, after;
    uint64_t heartbeats = 0;
    std::string state;
  };
  std::vector<Poll> polls;
  auto poll_once = [&] {
    Poll p;
    p.before = clock_.Now();
    const json st = AdminStatus();
    p.after = clock_.Now();
    if (const json* s = FindServer(st, 0, "rs2")) {
      p.heartbeats = (*s)["heartbeats"];
      p.state = (*s)["state"];
    }
    polls.push_back(p);
    return p;
  };
  // Poll until a heartbeat arrives between two polls, so some poll is known to precede the last
  // heartbeat the director gets before the stop.
  const uint64_t first = poll_once().heartbeats;
  ASSERT_TRUE(WaitUntil([&] { return poll_once().heartbeats > first; }, 2s));
  const size_t polls_before_stop = polls.size();

  const double active_silent = Transitions("ACTIVE", "SILENT");
  const double silent_down = Transitions("SILENT", "DOWN");
  const TimePoint stopped = clock_.Now();
  ASSERT_TRUE(cluster_->SignalServer(1, SIGSTOP).ok());
  ASSERT_TRUE(WaitUntil([&] { return poll_once().state == "DOWN"; }, 5s))
      << "last state " << polls.back().state;

  const uint64_t final_heartbeats = polls.back().heartbeats;
  // The latest poll that saw fewer heartbeats: the last heartbeat arrived after it began.
  TimePoint before_last_heartbeat{};
  for (const Poll& p : polls) {
    if (p.heartbeats < final_heartbeats) before_last_heartbeat = p.before;
  }
  const Poll* first_silent = nullptr;
  const Poll* first_down = nullptr;
  for (size_t i = polls_before_stop; i < polls.size(); ++i) {
    if (!first_silent && polls[i].state == "SILENT") first_silent = &polls[i];
    if (!first_down && polls[i].state == "DOWN") first_down = &polls[i];
    if (!first_silent && !first_down) {
      EXPECT_EQ(polls[i].state, "ACTIVE") << "poll " << i;
    }
  }
  ASSERT_NE(first_silent, nullptr) << "rs2 went DOWN without being seen SILENT";
  ASSERT_NE(first_down, nullptr);
  EXPECT_LT(first_silent, first_down);

  // Lower bounds, strictly from the configuration: SILENT no earlier than M periods and DOWN no
  // earlier than N periods after the last heartbeat (`after` of the first poll that saw the state
  // is no earlier than the transition; the last heartbeat came after before_last_heartbeat).
  const Duration silent_span = first_silent->after - before_last_heartbeat;
  const Duration down_span = first_down->after - before_last_heartbeat;
  EXPECT_GE(silent_span, kSilentAfter * period) << "SILENT before M missed heartbeats";
  EXPECT_GE(down_span, kDownAfter * period) << "DOWN before N missed heartbeats";
  // Upper bounds from the stop, from the configuration and what this test measured: the last
  // heartbeat came no later than the stop, and the director checks every tick (period / 4). The
  // poll before the first one that saw a state began before the transition (its answer predates
  // it), so the first one began no later than the transition plus the interval from one poll's
  // start to the next: the poll itself and WaitUntil's pause between polls.
  const Duration tick = period / 4;
  Duration longest_step{0};
  for (size_t i = polls_before_stop; i < polls.size(); ++i) {
    longest_step = std::max(longest_step, polls[i].before - polls[i - 1].before);
  }
  EXPECT_LE(first_silent->before - stopped, kSilentAfter * period + tick + longest_step)
      << "longest step between polls " << Ms(longest_step) << " ms";
  EXPECT_LE(first_down->before - stopped, kDownAfter * period + tick + longest_step)
      << "longest step between polls " << Ms(longest_step) << " ms";
  // Other servers may flap ACTIVE -> SILENT -> ACTIVE when the machine is loaded (100 ms
  // heartbeats); only rs2 goes DOWN.
  EXPECT_GE(Transitions("ACTIVE", "SILENT") - active_silent, 1);
  EXPECT_EQ(Transitions("SILENT", "DOWN") - silent_down, 1);

  // After detection the others answer everything.
  const TimePoint silent_seen = first_silent->after;
  const size_t sent_at_down = load.sent();
  ASSERT_TRUE(WaitUntil([&] { return load.sent() >= sent_at_down + 150; }, 5s));

  const TimePoint resumed = clock_.Now();
  ASSERT_TRUE(cluster_->SignalServer(1, SIGCONT).ok());
  // Its session was closed when it went DOWN: it reconnects and registers again.
  ASSERT_TRUE(WaitForState("rs2", "ACTIVE", 5s));
  const TimePoint active_again = clock_.Now();
  const size_t sent_at_active = load.sent();
  ASSERT_TRUE(WaitUntil([&] { return load.sent() >= sent_at_active + 150; }, 5s));
  load.Stop(1s);
  EXPECT_EQ(Transitions("DOWN", "JOINING"), 1);

  size_t wrong = 0, rejoined = 0;
  for (const auto& r : load.records()) {
    if (r.answered && !r.correct) ++wrong;
    if (r.answered && r.sent > active_again && ServerIndexByPort(r.from_port) == 1) ++rejoined;
  }
  EXPECT_EQ(wrong, 0u);
  const size_t window_sent = load.CountSent(stopped - 50ms, silent_seen);
  const size_t lost_window = load.CountSent(stopped - 50ms, silent_seen, kPatience);
  const size_t lost_after = load.CountSent(silent_seen, resumed, kPatience);
  std::printf(
      "[ measure  ] SIGSTOP: last heartbeat -> SILENT <= %.1f ms, -> DOWN <= %.1f ms "
      "(M*T %.0f ms, N*T %.0f ms); from the stop: SILENT seen %.1f ms, DOWN %.1f ms; "
      "lost %zu of %zu requests in the detection window, %zu of %zu after; SIGCONT to "
      "ACTIVE %.1f ms\n",
      Ms(silent_span), Ms(down_span), Ms(kSilentAfter * period), Ms(kDownAfter * period),
      Ms(first_silent->after - stopped), Ms(first_down->after - stopped), lost_window, window_sent,
      lost_after, load.CountSent(silent_seen, resumed), Ms(active_again - resumed));
  EXPECT_EQ(lost_after, 0u) << "requests were lost after the hang was detected";
  // rr sends one request in three to the hung server until it is SILENT.
  EXPECT_GT(lost_window, 0u) << "the stopped server answered: was it stopped at all?";
  EXPECT_LE(lost_window, window_sent / kServers + 3);
  EXPECT_GE(rejoined, 150u / kServers - 10) << "rs2 got no requests after it re-joined";
}

// ---- 6. Drain and remove ----

TEST_F(ClusterTest, DrainedServerGetsNoNewRequestsAndRemovedServerIsUnlisted) {
  ASSERT_NO_FATAL_FAILURE(StartCluster());
  std::vector<int> warm = UdpRoundTrips(30, 6);
  for (int i = 0; i < kServers; ++i) EXPECT_GT(warm[i], 0) << cluster_->server_id(i);

  auto drained = cluster_->AdminPost("/v1/servers/rs2/drain", json::object());
  ASSERT_TRUE(drained.ok()) << drained.status().ToString();
  EXPECT_EQ(State("rs2"), "DRAINING");

  const json before = AdminStatus();
  std::vector<int> per_server = UdpRoundTrips(150, 7);
  const json after = AdminStatus();
  EXPECT_EQ(per_server[1], 0) << "a draining server got new requests";
  EXPECT_EQ(per_server[0] + per_server[2], 150);
  EXPECT_GT(per_server[0], 0);
  EXPECT_GT(per_server[2], 0);
  EXPECT_EQ(ServerConns(after, 0, "rs2"), ServerConns(before, 0, "rs2"));
  EXPECT_GT(ServerConns(after, 0, "rs1"), ServerConns(before, 0, "rs1"));
  EXPECT_GT(ServerConns(after, 0, "rs3"), ServerConns(before, 0, "rs3"));
  // Draining is a state, not a kill: the server itself still answers.
  auto probe = UdpProbe::Open();
  ASSERT_TRUE(probe.ok());
  ASSERT_TRUE(
      probe->SendTo(cluster_->server_lookup_port(1), EncodeLookup(9, std::vector<uint64_t>{5}))
          .ok());
  EXPECT_TRUE(probe->ReceiveAnswerTo(9, 2s).has_value()) << "the drained server stopped serving";
  EXPECT_TRUE(cluster_->server_running(1));

  auto removed = cluster_->AdminPost("/v1/servers/rs2/remove", json::object());
  ASSERT_TRUE(removed.ok()) << removed.status().ToString();
  const json gone = AdminStatus();
  EXPECT_EQ(FindServer(gone, 0, "rs2"), nullptr);
  EXPECT_EQ(FindServer(gone, 1, "rs2"), nullptr);
  EXPECT_NE(FindServer(gone, 0, "rs1"), nullptr);
  EXPECT_EQ(Transitions("DRAINING", "REMOVED"), 1);
  // Its process is told rather than orphaned: it says so and exits 0, and stays unlisted.
  const std::optional<int> code = cluster_->WaitServerExit(1, 5s);
  ASSERT_TRUE(code.has_value()) << "the removed server's process still runs";
  EXPECT_EQ(*code, 0);
  const std::string log = ReadFile(work_dir_ + "/rs2.log");
  EXPECT_NE(log.find("removed by the operator (vsc adm remove)"), std::string::npos) << log;
  EXPECT_NE(ReadFile(work_dir_ + "/director.log")
                .find("rs2 removed by the operator; told its process and closed its control "
                      "session"),
            std::string::npos);
  EXPECT_EQ(State("rs2"), "") << "a removed server came back";
  std::vector<int> rest = UdpRoundTrips(30, 8);
  EXPECT_EQ(rest[1], 0);
  // Removing an ACTIVE server is refused: drain first.
  ExpectRefused(cluster_->AdminPost("/v1/servers/rs1/remove", json::object()), 409,
                "drain it first");
}

// ---- 7. Weights and scheduler at run time ----

TEST_F(ClusterTest, WeightsAndSchedulerChangeAtRunTime) {
  ASSERT_NO_FATAL_FAILURE(StartCluster());
  ASSERT_TRUE(cluster_->AdminPost("/v1/scheduler", {{"scheduler", "wrr"}}).ok());
  const uint32_t weights[kServers] = {1, 1, 3};
  for (int i = 0; i < kServers; ++i) {
    auto r = cluster_->AdminPost("/v1/servers/" + cluster_->server_id(i) + "/weight",
                                 {{"weight", weights[i]}});
    ASSERT_TRUE(r.ok()) << r.status().ToString();
  }
  ExpectRefused(cluster_->AdminPost("/v1/servers/rs1/weight", {{"weight", 70000}}), 400,
                "weight must be 0 to 65535");
  ExpectRefused(cluster_->AdminPost("/v1/scheduler", {{"scheduler", "nope"}}), 400,
                "unknown scheduler");
  const json st = AdminStatus();
  EXPECT_EQ(st["services"][0]["scheduler"], "wrr");
  for (int i = 0; i < kServers; ++i) {
    EXPECT_EQ((*FindServer(st, 0, cluster_->server_id(i)))["weight"], weights[i]);
  }

  // One client socket reaches one director worker (SO_REUSEPORT hashes the 4-tuple; the harness
  // runs one), whose cursor walks the scheduler's sequence: of P picks, a server of weight w in a
  // sequence of total weight W gets w*P/W within one partial cycle (w). Picks are the director's
  // counts; a client resend is one more pick (possibly of another server), so the answers a
  // server gave lie between its picks minus the resends and its picks. No tolerance beyond that.
  constexpr int kRequests = 3000;
  auto check_run = [&](const std::vector<int>& answered, int resends, const json& before,
                       const json& after, const std::vector<uint32_t>& w, const char* what) {
    uint32_t total_weight = 0;
    for (uint32_t x : w) total_weight += x;
    uint64_t picks = 0;
    for (int i = 0; i < kServers; ++i) {
      const std::string& id = cluster_->server_id(i);
      const uint64_t conns = ServerConns(after, 0, id) - ServerConns(before, 0, id);
      picks += conns;
      EXPECT_GE(conns, static_cast<uint64_t>(answered[i])) << what << ": " << id;
      EXPECT_LE(conns, static_cast<uint64_t>(answered[i] + resends)) << what << ": " << id;
    }
    EXPECT_EQ(picks, static_cast<uint64_t>(kRequests + resends))
        << what << ": " << resends << " resends";
    for (int i = 0; i < kServers; ++i) {
      const std::string& id = cluster_->server_id(i);
      const double conns =
          static_cast<double>(ServerConns(after, 0, id) - ServerConns(before, 0, id));
      EXPECT_NEAR(conns, static_cast<double>(w[i]) * static_cast<double>(picks) / total_weight,
                  w[i])
          << what << ": " << id << " was picked " << conns << " times of " << picks;
    }
  };
  const json before = AdminStatus();
  int resends = 0;
  std::vector<int> wrr = UdpRoundTrips(kRequests, 10, &resends);
  const json middle = AdminStatus();
  check_run(wrr, resends, before, middle, {weights[0], weights[1], weights[2]}, "wrr 1:1:3");

  ASSERT_TRUE(cluster_->AdminPost("/v1/scheduler", {{"scheduler", "rr"}}).ok());
  EXPECT_EQ(AdminStatus()["services"][0]["scheduler"], "rr");
  const json rr_before = AdminStatus();
  int rr_resends = 0;
  std::vector<int> rr = UdpRoundTrips(kRequests, 11, &rr_resends);
  check_run(rr, rr_resends, rr_before, AdminStatus(), {1, 1, 1}, "rr");
  std::printf(
      "[ measure  ] wrr 1:1:3 -> %d/%d/%d (%d resends), rr -> %d/%d/%d (%d resends) of %d "
      "requests each\n",
      wrr[0], wrr[1], wrr[2], resends, rr[0], rr[1], rr[2], rr_resends, kRequests);
}

}  // namespace
}  // namespace vsc::integration

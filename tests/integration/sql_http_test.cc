// The rqlite-compatible HTTP API end to end (issue 8, DESIGN §9a): a director and 3 real
// servers as processes on 127.0.0.1, driven with curl (a real HTTP client, as a user would) and
// with rqlite's own JavaScript client (rqlite-js from npm, run by Node: tests/integration/
// sql_http/rqlite_js_check.mjs). Each replica's database file is opened directly to check that
// a failed transaction applied nothing anywhere.
#include <poll.h>
#include <sqlite3.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "common/unique_fd.h"
#include "integration/cluster_harness.h"
#include "integration/sql_http_fixture.h"
#include "net/endpoint.h"

#ifndef VSC_SOURCE_DIR
#error "VSC_SOURCE_DIR must name the source tree (set by tests/integration/CMakeLists.txt)"
#endif

namespace vsc::integration {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

TEST_F(SqlHttpTest, CurlCreatesWritesAndReadsAtEveryLevel) {
  StartCluster();
  Http create =
      Execute({"CREATE TABLE foo (id INTEGER PRIMARY KEY, name TEXT, age INTEGER, b BLOB)"});
  ASSERT_EQ(create.status, 200) << create.body;
  EXPECT_EQ(create.Json()["results"], json::parse("[{}]")) << create.body;
  EXPECT_GT(create.Json().value("seq", 0), 0) << create.body;

  Http ins = Execute(json::parse(R"j([["INSERT INTO foo(name, age) VALUES(?, ?)", "fiona", 20],
      ["INSERT INTO foo(name, age, b) VALUES(:name, :age, :b)", {"name": "sinead", "age": 21,
       "b": "x'deadbeef'"}], "INSERT INTO foo(name) VALUES(NULL)"])j"),
                     "?transaction&timings");
  ASSERT_EQ(ins.status, 200) << ins.body;
  json j = ins.Json();
  EXPECT_EQ(j["results"][0], json::parse(R"j({"last_insert_id":1,"rows_affected":1})j"))
      << ins.body;
  EXPECT_EQ(j["results"][1], json::parse(R"j({"last_insert_id":2,"rows_affected":1})j"))
      << ins.body;
  EXPECT_TRUE(j.contains("time")) << ins.body;
  const uint64_t seq = j.value("seq", 0);
  ASSERT_GT(seq, 0u);

  for (const std::string level : {"none", "weak", "strong"}) {
    Http q = Get("/db/query?level=" + level + "&min_seq=" + std::to_string(seq) +
                 "&q=SELECT%20*%20FROM%20foo%20ORDER%20BY%20id");
    ASSERT_EQ(q.status, 200) << level << ": " << q.body;
    EXPECT_EQ(q.Json()["results"][0], json::parse(R"j({"columns":["id","name","age","b"],
                "types":["integer","text","integer","blob"],
                "values":[[1,"fiona",20,null],[2,"sinead",21,"3q2+7w=="],[3,null,null,null]]})j"))
        << level << ": " << q.body;
  }
  Http assoc = Query(json::parse(R"j([["SELECT name, id FROM foo WHERE age = ?", 20],
                                     "SELECT COUNT(*) FROM nope"])j"),
                     "?associative&pretty");
  ASSERT_EQ(assoc.status, 200) << assoc.body;
  EXPECT_NE(assoc.body.find("\n    \"results\""), std::string::npos) << "pretty: " << assoc.body;
  EXPECT_EQ(
      assoc.Json()["results"],
      json::parse(R"j([{"types":{"id":"integer","name":"text"},"rows":[{"id":1,"name":"fiona"}]},
                            {"error":"sql error: prepare 'SELECT COUNT(*) FROM nope': no such table: nope"}])j"))
      << assoc.body;
  // blob_array, qualify_columns (only a table's column is qualified), and redirect: the director
  // is the leader, so a redirect request is served, as an rqlite leader serves it (no 301).
  Http flags =
      Get("/db/query?blob_array&qualify_columns&redirect&q=" +
          std::string("SELECT%20id%2C%20b%2C%20length(b)%20AS%20n%20FROM%20foo%20WHERE%20id%3D2"));
  ASSERT_EQ(flags.status, 200) << flags.body;
  EXPECT_EQ(flags.Json()["results"][0], json::parse(R"j({"columns":["foo.id","foo.b","n"],
                "types":["integer","blob","integer"],"values":[[2,[222,173,190,239],4]]})j"))
      << flags.body;
  Http redirect = Execute({"INSERT INTO foo(name) VALUES('r')"}, "?redirect");
  EXPECT_EQ(redirect.status, 200) << redirect.body;
  EXPECT_EQ(redirect.Json()["results"][0].value("last_insert_id", 0), 4) << redirect.body;
  Http status = Get("/status");
  EXPECT_EQ(status.Json()["store"]["leader"]["node_id"], "director") << status.body;
  EXPECT_TRUE(Get("/nodes").Json()["director"]["leader"].get<bool>());
}

TEST_F(SqlHttpTest, AFailingStatementInATransactionAppliesNothingAnywhere) {
  StartCluster();
  ASSERT_EQ(Execute({"CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT UNIQUE)"}).status, 200);
  Http bad = Execute(json::parse(R"j([["INSERT INTO t(v) VALUES(?)", "a"],
      ["INSERT INTO t(v) VALUES(?)", "b"], ["INSERT INTO t(v) VALUES(?)", "a"],
      ["INSERT INTO t(v) VALUES(?)", "c"]])j"),
                     "?transaction");
  ASSERT_EQ(bad.status, 200) << bad.body;
  json r = bad.Json()["results"];
  ASSERT_EQ(r.size(), 3u) << "earlier statements, then the error, nothing after: " << bad.body;
  EXPECT_NE(r[2].value("error", "").find("UNIQUE constraint failed: t.v"), std::string::npos)
      << bad.body;
  // The rolled-back statements show what they did, as rqlite shows them
  // (Test_PartialFailTransaction).
  EXPECT_EQ(r[0], json::parse(R"j({"last_insert_id":1,"rows_affected":1})j")) << bad.body;
  EXPECT_EQ(r[1], json::parse(R"j({"last_insert_id":2,"rows_affected":1})j")) << bad.body;
  // Without transaction each statement stands alone: the failure is in its slot.
  Http each = Execute(json::parse(R"j([["INSERT INTO t(v) VALUES(?)", "x"],
      ["INSERT INTO t(v) VALUES(?)", "x"], ["INSERT INTO t(v) VALUES(?)", "y"]])j"));
  json e = each.Json()["results"];
  ASSERT_EQ(e.size(), 3u) << each.body;
  EXPECT_EQ(e[0].value("rows_affected", 0), 1) << each.body;
  EXPECT_TRUE(e[1].contains("error")) << each.body;
  EXPECT_EQ(e[2].value("last_insert_id", 0), 2) << each.body;
  const uint64_t seq = each.Json().value("seq", 0);
  for (int i = 0; i < kServers; ++i) {
    ASSERT_TRUE(WaitUntil([&] { return CountInReplica(i, "t") == 2; }, 10s, 20ms))
        << "replica " << i << " has " << CountInReplica(i, "t") << " rows (seq " << seq << ")";
  }
}

TEST_F(SqlHttpTest, LargeResultsAndBlobsStreamWithinTheCap) {
  StartCluster();
  ASSERT_EQ(
      Execute({"CREATE TABLE big (id INTEGER PRIMARY KEY, s TEXT)", "CREATE TABLE blobs (b BLOB)"})
          .status,
      200);
  Http fill =
      Execute({"WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < " +
               std::to_string(kMaxRows) + ") INSERT INTO big SELECT x, 'row ' || x FROM c"});
  ASSERT_EQ(fill.status, 200) << fill.body;
  ASSERT_EQ(fill.Json()["results"][0].value("rows_affected", 0), kMaxRows) << fill.body;
  Http all = Get("/db/query?q=SELECT%20*%20FROM%20big%20ORDER%20BY%20id");
  ASSERT_EQ(all.status, 200);
  json v = all.Json()["results"][0]["values"];
  ASSERT_EQ(v.size(), kMaxRows) << all.body.substr(0, 300);
  EXPECT_EQ(v[kMaxRows - 1], json::parse("[100000, \"row 100000\"]"));
  // A 1 MiB blob bound as a parameter, and read back whole (one row larger than a page).
  std::string blob(1 << 20, '\0'), hex;
  for (size_t i = 0; i < blob.size(); ++i) blob[i] = static_cast<char>((i * 131) >> 3);
  static constexpr char kHex[] = "0123456789abcdef";
  for (unsigned char c : blob) hex += {kHex[c >> 4], kHex[c & 15]};
  Http put = Execute(json::array({json::array({"INSERT INTO blobs VALUES(?)", "x'" + hex + "'"})}));
  ASSERT_EQ(put.status, 200) << put.body;
  ASSERT_EQ(put.Json()["results"][0].value("rows_affected", 0), 1) << put.body;
  Http got = Get("/db/query?q=SELECT%20b,%20length(b)%20FROM%20blobs");
  ASSERT_EQ(got.status, 200);
  json row = got.Json()["results"][0]["values"][0];
  ASSERT_EQ(row.size(), 2u) << got.body.substr(0, 300);
  EXPECT_EQ(row[1], 1 << 20);
  // The value is base64: decoded by coreutils, it is the very blob.
  std::ofstream(work_dir_ + "/blob.b64") << row[0].get<std::string>();
  std::ofstream(work_dir_ + "/blob.bin", std::ios::binary) << blob;
  ShellRun same = Shell("base64 -d " + work_dir_ + "/blob.b64 | cmp - " + work_dir_ + "/blob.bin");
  EXPECT_EQ(same.exit, 0) << same.out;
  // Past the write payload limit (4 MiB of SQL and parameters): a clear refusal, nothing applied.
  Http huge = Execute(json::array(
      {json::array({"INSERT INTO blobs VALUES(?)", "x'" + std::string(8 << 20, 'a') + "00'"})}));
  ASSERT_EQ(huge.status, 200) << huge.body.substr(0, 300);
  EXPECT_NE(huge.Json()["results"][0]
                .value("error", "")
                .find("more than 4194304 bytes of SQL and parameters; split it"),
            std::string::npos)
      << huge.body.substr(0, 300);
  ASSERT_EQ(Execute({"INSERT INTO big(s) VALUES('one more')"}).status, 200);
  Http over = Get("/db/query?q=SELECT%20*%20FROM%20big");
  EXPECT_NE(
      over.Json()["results"][0].value("error", "").find("result too large: more than 100000 rows"),
      std::string::npos)
      << over.body.substr(0, 300);
}

TEST_F(SqlHttpTest, BadInputIsRefusedInRqlitesFormatAndAppliesNothing) {
  StartCluster();
  ASSERT_EQ(Execute({"CREATE TABLE t (id INTEGER PRIMARY KEY)"}).status, 200);
  auto expect = [&](const Http& h, int status, const std::string& text) {
    EXPECT_EQ(h.status, status) << h.body;
    EXPECT_NE(h.body.find(text), std::string::npos) << h.body;
  };
  expect(Curl("POST", "/db/execute", "[\"INSERT INTO t VALUES(1)\""), 400, "invalid JSON body");
  expect(Curl("POST", "/db/execute", "{\"a\": 1}"), 400, "invalid request");
  expect(Curl("POST", "/db/execute", "[]"), 400, "no statements");
  expect(Curl("POST", "/db/execute", R"j([["INSERT INTO t VALUES(?)", {"x": {}}]])j"), 400,
         "positional but named parameters were given");
  expect(Curl("POST", "/db/execute", R"j([["INSERT INTO t VALUES(?)", [300]]])j"), 400,
         "unsupported type");
  json many = json::array();
  for (int i = 0; i < 1001; ++i) many.push_back("INSERT INTO t VALUES(" + std::to_string(i) + ")");
  expect(Curl("POST", "/db/execute", many.dump()), 400, "too many statements (1001)");
  expect(Curl("POST", "/db/execute", std::string(11 << 20, ' ')), 413, "");
  expect(Curl("GET", "/db/execute"), 405, "");
  expect(Curl("GET", "/nowhere"), 404, "");
  expect(Curl("GET", "/db/query?q="), 400, "query parameter not set");
  expect(Curl("GET", "/db/query?q=SELECT%201&freshness=soon"), 400,
         "freshness is not a valid duration");
  expect(Curl("POST", "/db/execute?queue", "[\"INSERT INTO t VALUES(5)\"]"), 400, "not supported");
  expect(Curl("POST", "/db/load", "x"), 501, "not supported");
  expect(Curl("POST", "/db/backup", "x"), 405, "");

  // Slowloris: a request trickled a byte at a time is closed once the request timeout passes.
  UniqueFd fd(socket(AF_INET, SOCK_STREAM, 0));
  sockaddr_in sa = net::ToSockaddr(
      asio::ip::udp::endpoint(asio::ip::make_address_v4("127.0.0.1"), cluster_->http_port()));
  ASSERT_EQ(connect(fd.get(), reinterpret_cast<sockaddr*>(&sa), sizeof(sa)), 0);
  const std::string slow = "POST /db/execute HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n";
  const auto started = std::chrono::steady_clock::now();
  bool closed = false;
  // One byte, then up to 100 ms waiting for the server to close (poll: a condition, not a nap).
  for (size_t i = 0; i < 100 && !closed; ++i) {
    if (send(fd.get(), &slow[i % slow.size()], 1, MSG_NOSIGNAL) != 1) break;
    pollfd p{fd.get(), POLLIN, 0};
    if (poll(&p, 1, 100) > 0) {
      char c;
      const ssize_t n = recv(fd.get(), &c, 1, MSG_DONTWAIT);
      closed = n == 0 || (n < 0 && errno != EAGAIN);
    }
  }
  closed = closed || send(fd.get(), "x", 1, MSG_NOSIGNAL) != 1;
  EXPECT_TRUE(closed) << "a trickling client was never closed";
  EXPECT_LT(std::chrono::steady_clock::now() - started, 5s);
  for (int i = 0; i < kServers; ++i) EXPECT_EQ(CountInReplica(i, "t"), 0) << "replica " << i;
}

TEST_F(SqlHttpTest, ReplicationOffSaysSoOnEveryDataPath) {
  StartCluster(/*replication=*/false);
  for (const auto& [method, target] : std::vector<std::pair<std::string, std::string>>{
           {"POST", "/db/execute"}, {"GET", "/db/query?q=SELECT%201"}, {"POST", "/db/request"}}) {
    Http h = Curl(method, target, "[\"SELECT 1\"]");
    EXPECT_EQ(h.status, 503) << target;
    EXPECT_NE(h.body.find("replication is not enabled on this director"), std::string::npos)
        << target << ": " << h.body;
  }
}

// GET /db/backup: a real SQLite file of one replica at the seq X-Vsc-Seq names, with the
// `backup` permission of the users file.
TEST_F(SqlHttpTest, BackupIsOneReplicasConsistentFileAtAKnownSeq) {
  StartCluster(true, R"j([{"username": "*", "perms": ["execute", "query", "ready", "status"]},
                          {"username": "ops", "password": "pw", "perms": ["backup"]}])j");
  ASSERT_EQ(Execute({"CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)"}).status, 200);
  Http fill =
      Execute({"WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < "
               "20000) INSERT INTO t SELECT x, 'v' || x FROM c"});
  ASSERT_EQ(fill.status, 200) << fill.body;
  const uint64_t seq = fill.Json().value("seq", 0);
  EXPECT_EQ(Get("/db/backup").status, 401) << "anonymous has no backup permission";
  const std::string file = work_dir_ + "/backup.db", head = work_dir_ + "/backup.head";
  ShellRun curl = Shell("curl -sS -m 30 -u ops:pw -D " + head + " -o " + file +
                        " -w '%{http_code}' " + Url("/db/backup"));
  ASSERT_EQ(curl.out, "200") << curl.out;
  std::ifstream h(head);
  const std::string headers((std::istreambuf_iterator<char>(h)), {});
  const size_t at = headers.find("X-Vsc-Seq: ");
  ASSERT_NE(at, std::string::npos) << headers;
  EXPECT_GE(std::stoull(headers.substr(at + 11)), seq) << "every acknowledged write is in it";
  ShellRun check = Shell("sqlite3 -readonly " + file +
                         " 'PRAGMA integrity_check' 'SELECT COUNT(*), MAX(v) FROM t'");
  EXPECT_EQ(check.out, "ok\n20000|v9999\n");
  ShellRun wrong =
      Shell("curl -sS -m 10 -u ops:nope -o /dev/null -w '%{http_code}' " + Url("/db/backup"));
  EXPECT_EQ(wrong.out, "401") << "a wrong password";
}

// rqlite's own JavaScript client from npm, run by Node against the director.
TEST_F(SqlHttpTest, RqliteJsClientWorksUnchanged) {
  const std::string dir = std::string(VSC_BINARY_DIR) + "/rqlite-js";
  const std::string src = std::string(VSC_SOURCE_DIR) + "/tests/integration/sql_http";
  if (!fs::exists(dir + "/node_modules/rqlite-js") ||
      !fs::exists(dir + "/node_modules/@babel/runtime")) {
    fs::create_directories(dir);
    fs::copy_file(src + "/package.json", dir + "/package.json",
                  fs::copy_options::overwrite_existing);
    ShellRun npm = Shell("cd '" + dir + "' && npm install --no-audit --no-fund --loglevel=error");
    ASSERT_EQ(npm.exit, 0) << "npm could not install rqlite-js (does npm reach its registry? "
                              "run scripts/install-deps): "
                           << npm.out;
  }
  StartCluster();
  ShellRun node =
      Shell("cd '" + dir + "' && NODE_PATH='" + dir + "/node_modules' timeout 60 node '" + src +
            "/rqlite_js_check.mjs' " + Url("") + " " + std::to_string(cluster_->server_pid(0)));
  EXPECT_EQ(node.exit, 0) << node.out;
  std::printf("%s", node.out.c_str());
}

}  // namespace
}  // namespace vsc::integration

namespace vsc::integration {
namespace {

// Issue 11: an Idempotency-Key makes a retried write safe.
TEST_F(SqlHttpTest, TheSameIdempotencyKeyTwiceAppliesOnceAndTheRetrySaysDuplicate) {
  StartCluster();
  ASSERT_EQ(Execute({"CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)"}).status, 200);
  const std::string body = json::parse(R"j([["INSERT INTO t(v) VALUES(?)", "once"]])j").dump();
  auto keyed = [&](const std::string& flags, const std::string& b) {
    return Curl("POST", "/db/execute" + flags, b, "application/json", "Idempotency-Key: order-7");
  };
  Http first = keyed("", body);
  ASSERT_EQ(first.status, 200) << first.body;
  EXPECT_FALSE(first.Json()["results"][0].contains("duplicate")) << first.body;
  Http retry = keyed("", body);
  ASSERT_EQ(retry.status, 200) << retry.body;
  json r = retry.Json();
  EXPECT_EQ(r["results"][0].value("duplicate", false), true) << retry.body;
  EXPECT_EQ(r["results"][0].value("last_insert_id", 0), 1) << "the original's answer";
  EXPECT_EQ(r.value("seq", 0), first.Json().value("seq", 0)) << "the original's seq";
  // A key for several writes is refused, and nothing of it is applied.
  Http two = keyed("", json::parse(R"j([["INSERT INTO t(v) VALUES(?)", "a"],
      ["INSERT INTO t(v) VALUES(?)", "b"]])j")
                           .dump());
  EXPECT_EQ(two.status, 400) << two.body;
  EXPECT_NE(two.body.find("Idempotency-Key names one write"), std::string::npos) << two.body;
  for (int i = 0; i < kServers; ++i) {
    ASSERT_TRUE(WaitUntil([&] { return CountInReplica(i, "t") == 1; }, 10s, 20ms))
        << "replica " << i << " has " << CountInReplica(i, "t") << " rows";
  }
  Http rows = Query({"SELECT COUNT(*) FROM t"}, "?level=strong");
  EXPECT_EQ(rows.Json()["results"][0]["values"][0][0], 1) << rows.body;
}

}  // namespace
}  // namespace vsc::integration

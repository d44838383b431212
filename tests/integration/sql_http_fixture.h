// The fixture of the HTTP API's integration tests (sql_http_test.cc, sql_http_tls_test.cc): a
// director and real servers as processes on 127.0.0.1, driven with curl. Test thread only.
#pragma once

#include <sqlite3.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "integration/cluster_harness.h"

namespace vsc::integration {

using json = nlohmann::json;

constexpr int kServers = 3;
constexpr uint32_t kMaxRows = 100000;

struct ShellRun {
  int exit = -1;
  std::string out;
};

inline ShellRun Shell(const std::string& command) {
  ShellRun r;
  FILE* p = popen((command + " 2>&1").c_str(), "r");
  if (p == nullptr) return r;
  char buf[65536];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) r.out.append(buf, n);
  const int status = pclose(p);
  r.exit = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

struct Http {
  int status = 0;
  std::string body;
  json Json() const { return json::parse(body, nullptr, false); }
};

class SqlHttpTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { ASSERT_FALSE(SharedDbPath().empty()); }

  void TearDown() override {
    if (cluster_) cluster_->Stop();
    if (HasFailure()) {
      std::printf("work directory kept: %s\n", work_dir_.c_str());
    } else if (!work_dir_.empty()) {
      std::error_code ec;
      std::filesystem::remove_all(work_dir_, ec);
    }
  }

  // `users`: an rqlite users file for http_auth (none: no auth); `extra`: more director flags.
  void StartCluster(bool replication = true, const std::string& users = "",
                    const std::vector<std::string>& extra = {}) {
    work_dir_ = MakeTempDir("vsc-sqlhttp-");
    bench::LocalClusterOptions o;
    o.vsc_binary = VSC_BINARY;
    o.work_dir = work_dir_;
    o.db_path = SharedDbPath();
    o.real_servers = replication ? kServers : 1;
    o.heartbeat_interval_ms = 100;
    o.replication = replication;
    o.director_extra_args = {"--max-result-rows",         std::to_string(kMaxRows),
                             "--http-request-timeout-ms", "1000",
                             "--http-max-body",           std::to_string(10 << 20)};
    o.director_extra_args.insert(o.director_extra_args.end(), extra.begin(), extra.end());
    if (!users.empty()) {
      std::ofstream(work_dir_ + "/users.json") << users;
      o.director_extra_args.insert(o.director_extra_args.end(),
                                   {"--http-auth", work_dir_ + "/users.json"});
    }
    auto c = bench::LocalCluster::Start(o);
    ASSERT_TRUE(c.ok()) << c.status().ToString() << " (logs in " << work_dir_ << ")";
    cluster_ = std::move(c).value();
    ASSERT_NE(cluster_->http_port(), 0) << "no http_port in the director's ready file";
    ASSERT_TRUE(cluster_->WaitAllActive(std::chrono::seconds(20)).ok());
    if (replication) {
      ASSERT_TRUE(WaitUntil([&] { return Get("/readyz").status == 200; }, std::chrono::seconds(30),
                            std::chrono::milliseconds(20)))
          << Get("/readyz").body;
    }
  }

  std::string Url(const std::string& target) const {
    return scheme_ + "://127.0.0.1:" + std::to_string(cluster_->http_port()) + target;
  }

  // curl with the body from a file (any size, any bytes); the status comes after the body.
  // `header`: one more request header ("Name: value"), if any.
  Http Curl(const std::string& method, const std::string& target, const std::string& body = "",
            const std::string& content_type = "application/json", const std::string& header = "") {
    const std::string file = work_dir_ + "/body";
    std::ofstream(file, std::ios::binary) << body;
    std::string cmd = "curl -sS -m 30 " + curl_flags_ + " -o " + work_dir_ +
                      "/out -w '%{http_code}' -X " + method;
    if (method == "POST") cmd += " -H 'Content-Type: " + content_type + "' --data-binary @" + file;
    if (!header.empty()) cmd += " -H '" + header + "'";
    cmd += " '" + Url(target) + "'";
    ShellRun r = Shell(cmd);
    Http h;
    h.status = std::atoi(r.out.c_str());
    std::ifstream in(work_dir_ + "/out", std::ios::binary);
    h.body.assign(std::istreambuf_iterator<char>(in), {});
    if (r.exit != 0) h.body = "curl failed: " + r.out;  // not a stale answer from before
    ::unlink((work_dir_ + "/out").c_str());
    return h;
  }
  Http Get(const std::string& target) { return Curl("GET", target); }
  Http Execute(const json& body, const std::string& flags = "") {
    return Curl("POST", "/db/execute" + flags, body.dump());
  }
  Http Query(const json& body, const std::string& flags = "") {
    return Curl("POST", "/db/query" + flags, body.dump());
  }

  // COUNT(*) of `table` in replica i's own database file.
  int64_t CountInReplica(int i, const std::string& table) {
    sqlite3* db = nullptr;
    int64_t n = -1;
    if (sqlite3_open_v2(cluster_->server_db(i).c_str(), &db, SQLITE_OPEN_READONLY, nullptr) ==
        SQLITE_OK) {
      sqlite3_busy_timeout(db, 5000);
      sqlite3_stmt* st = nullptr;
      if (sqlite3_prepare_v2(db, ("SELECT COUNT(*) FROM " + table).c_str(), -1, &st, nullptr) ==
              SQLITE_OK &&
          sqlite3_step(st) == SQLITE_ROW) {
        n = sqlite3_column_int64(st, 0);
      }
      sqlite3_finalize(st);
    }
    sqlite3_close(db);
    return n;
  }

  std::string work_dir_;
  std::string scheme_ = "http";
  std::string curl_flags_;  // e.g. --cacert for HTTPS
  std::unique_ptr<bench::LocalCluster> cluster_;
};

}  // namespace vsc::integration

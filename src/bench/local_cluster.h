// LocalCluster: a whole cluster on this machine as child processes — one director and N real
// servers (`vsc director`, `vsc realserver`), with a generated cluster key, ready files for the
// bound ports (everything on port 0), logs in a work directory, and optionally each real server
// in its own cgroup (v1 `cpu` controller) limited to a fraction of a CPU. Used by `vsc demo`,
// the bench scenarios and the integration tests.
//
// Not thread safe. Stop() (or the destructor) terminates every child; children also die with
// the parent (PR_SET_PDEATHSIG).
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "common/subprocess.h"

namespace vsc::bench {

struct LocalClusterOptions {
  std::string vsc_binary;        // path of `vsc` (SelfExecutable() from inside vsc)
  std::string work_dir;          // created if missing: logs, ready files, key, token
  std::string db_path;           // resource database; each real server gets its own copy
                                 // (work_dir/rsN.db), removed at Stop() without replication
  int real_servers = 4;
  bool start_director = true;    // false: real servers alone (the seed's single top node)
  std::string scheduler = "wlc";
  uint32_t director_workers = 1;
  uint32_t rs_workers = 1;
  uint32_t heartbeat_interval_ms = 200;
  uint32_t silent_after = 2;
  uint32_t down_after = 5;
  double rs_cpu_quota = 0;       // CPUs per real server via cgroup cpu.cfs_quota_us; 0 = none
  std::string log_level = "info";
  std::vector<std::string> director_extra_args;
  // The address the director's services and the real servers' listen on (the director's
  // `listen`, each server's `listen`, the servers' --director); the admin API stays on
  // 127.0.0.1. "::1" runs the whole cluster on IPv6.
  std::string host = "127.0.0.1";
  // Replicated databases (issue 3): the director keeps its log in work_dir/director-log.db with
  // db_path as the bootstrap (seq 0) database, and opens its write and SQL ports.
  bool replication = false;
  std::string commit_policy = "all";
  // The clip relay (issue 9): every real server runs it (--relay) and joins the ring.
  bool relay = false;
  std::vector<std::string> rs_extra_args;
};

class LocalCluster {
 public:
  static Result<std::unique_ptr<LocalCluster>> Start(const LocalClusterOptions& options);
  ~LocalCluster();

  uint16_t lookup_port() const { return lookup_port_; }
  uint16_t admin_port() const { return admin_port_; }
  uint16_t http_port() const { return http_port_; }  // the rqlite-compatible HTTP API
  uint16_t control_port() const { return control_port_; }
  uint16_t heartbeat_port() const { return heartbeat_port_; }
  uint16_t write_port() const { return write_port_; }  // replication only
  uint16_t sql_port() const { return sql_port_; }      // replication only
  uint16_t ring_port() const { return ring_port_; }    // the director's ring port
  uint16_t server_relay_port(int i) const { return servers_[i].relay_port; }
  // Starts one more real server (index size() before the call), with its own database copy;
  // returns its index.
  Result<int> AddServer();
  const std::string& key_file() const { return key_file_; }
  const std::string& host() const { return options_.host; }
  std::string work_dir() const { return options_.work_dir; }
  // The database file real server i serves (its own copy of db_path).
  std::string server_db(int i) const;
  const std::string& admin_token() const { return token_; }
  const std::string& key_hex() const { return key_hex_; }
  int size() const { return static_cast<int>(servers_.size()); }
  std::string server_id(int i) const { return "rs" + std::to_string(i + 1); }
  uint16_t server_lookup_port(int i) const { return servers_[i].lookup_port; }
  uint16_t server_http_port(int i) const { return servers_[i].http_port; }
  pid_t director_pid() const { return director_ ? director_->pid() : -1; }
  pid_t server_pid(int i) const { return servers_[i].process ? servers_[i].process->pid() : -1; }
  bool server_running(int i) { return servers_[i].process && servers_[i].process->running(); }

  // Sends `sig` to real server i (SIGKILL for a crash, SIGSTOP for a hung host).
  Status SignalServer(int i, int sig);
  // Waits until real server i exits by itself; its exit code, or nullopt after `timeout`.
  std::optional<int> WaitServerExit(int i, Duration timeout);
  // Starts real server i again (after it was killed), waits until it serves.
  Status RestartServer(int i);
  // Sends `sig` to the director; RestartDirector starts it again on the same ports and log.
  Status SignalDirector(int sig);
  Status RestartDirector();
  // GET/POST the director's admin API.
  Result<nlohmann::json> AdminGet(const std::string& target);
  Result<nlohmann::json> AdminPost(const std::string& target, const nlohmann::json& body);
  // State of a real server as the director lists it ("ACTIVE", "DOWN"...), or "" if unlisted.
  Result<std::string> ServerState(const std::string& id);
  // Polls the admin API until the server has `state` or the timeout passes.
  Status WaitForState(const std::string& id, const std::string& state, Duration timeout);
  // Waits until every real server is ACTIVE.
  Status WaitAllActive(Duration timeout);
  void Stop();

 private:
  struct Server {
    std::unique_ptr<Subprocess> process;
    uint16_t lookup_port = 0;
    uint16_t http_port = 0;
    uint16_t relay_port = 0;
    std::string cgroup;  // directory, when limited
  };
  explicit LocalCluster(LocalClusterOptions options) : options_(std::move(options)) {}
  Status StartDirector();
  Status StartServer(int i);
  Status CopyDatabase(int i);
  std::string Path(const std::string& name) const { return options_.work_dir + "/" + name; }

  LocalClusterOptions options_;
  std::unique_ptr<Subprocess> director_;
  std::vector<Server> servers_;
  std::string key_file_;
  std::string key_hex_;
  std::string token_;
  uint16_t lookup_port_ = 0, admin_port_ = 0, control_port_ = 0, heartbeat_port_ = 0;
  uint16_t write_port_ = 0, sql_port_ = 0, ring_port_ = 0;
  uint16_t http_port_ = 0;
};

}  // namespace vsc::bench

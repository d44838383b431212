#include "bench/local_cluster.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <filesystem>

#include "common/file_text.h"
#include "net/endpoint.h"
#include "net/http_client.h"
#include "proto/cluster_key.h"

namespace vsc::bench {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

// A database and the files SQLite and the replica keep beside it.
void RemoveDatabaseFiles(const std::string& db) {
  for (const char* suffix : {"", "-wal", "-shm", ".vsc-checksum"}) ::unlink((db + suffix).c_str());
}

Result<nlohmann::json> ParseReady(const std::string& text, const std::string& path) {
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded()) return Internal("ready file " + path + " is not JSON");
  return j;
}

}  // namespace

Result<std::unique_ptr<LocalCluster>> LocalCluster::Start(const LocalClusterOptions& options) {
  std::unique_ptr<LocalCluster> c(new LocalCluster(options));
  std::error_code ec;
  fs::create_directories(options.work_dir, ec);
  if (ec) return IoError("cannot create " + options.work_dir + ": " + ec.message());
  if (options.real_servers < 0 || options.real_servers > 64) {
    return InvalidArgument("real_servers must be 0 to 64");
  }
  VSC_ASSIGN_OR_RETURN(auto key, proto::ClusterKey::Generate());
  c->key_file_ = c->Path("cluster.key");
  c->key_hex_ = key.Hex();
  ::unlink(c->key_file_.c_str());
  VSC_RETURN_IF_ERROR(key.WriteFile(c->key_file_));
  // Every real server has its own copy (a database belongs to one server: a second one on the
  // same file is refused), and every replica starts from the same bytes: db_path.
  for (int i = 0; i < options.real_servers; ++i) VSC_RETURN_IF_ERROR(c->CopyDatabase(i));
  if (options.replication) {
    for (const char* suffix : {"", "-wal", "-shm"}) {
      ::unlink(c->Path(std::string("director-log.db") + suffix).c_str());
    }
  }
  if (options.start_director) VSC_RETURN_IF_ERROR(c->StartDirector());
  c->servers_.resize(options.real_servers);
  for (int i = 0; i < options.real_servers; ++i) VSC_RETURN_IF_ERROR(c->StartServer(i));
  return c;
}

LocalCluster::~LocalCluster() { Stop(); }

Status LocalCluster::CopyDatabase(int i) {
  const std::string copy = server_db(i);
  RemoveDatabaseFiles(copy);
  std::error_code ec;
  fs::copy_file(options_.db_path, copy, fs::copy_options::overwrite_existing, ec);
  if (ec) return IoError("cannot copy " + options_.db_path + " to " + copy + ": " + ec.message());
  return Status::Ok();
}

Result<int> LocalCluster::AddServer() {
  const int i = size();
  VSC_RETURN_IF_ERROR(CopyDatabase(i));
  servers_.emplace_back();
  VSC_RETURN_IF_ERROR(StartServer(i));
  return i;
}

std::string LocalCluster::server_db(int i) const { return Path(server_id(i) + ".db"); }

Status LocalCluster::StartDirector() {
  const std::string ready = Path("director.ready");
  const std::string token_file = Path("director-admin.token");
  ::unlink(ready.c_str());
  // A restarted director keeps its ports (real servers and clients know them) and its token.
  const bool restart = lookup_port_ != 0;
  if (!restart) ::unlink(token_file.c_str());
  auto port = [&](uint16_t p) { return std::to_string(restart ? p : 0); };
  SpawnOptions so;
  so.argv = {options_.vsc_binary,
             "director",
             "--listen", options_.host,
             "--key-file", key_file_,
             "--lookup-port", port(lookup_port_),
             "--control-port", port(control_port_),
             "--heartbeat-port", port(heartbeat_port_),
             "--admin-port", port(admin_port_),
             "--ring-port", port(ring_port_),
             "--http-port", port(http_port_),
             "--admin-token-file", token_file,
             "--workers", std::to_string(options_.director_workers),
             "--scheduler", options_.scheduler,
             "--heartbeat-interval-ms", std::to_string(options_.heartbeat_interval_ms),
             "--silent-after", std::to_string(options_.silent_after),
             "--down-after", std::to_string(options_.down_after),
             "--log-level", options_.log_level,
             "--ready-file", ready};
  if (options_.replication) {
    so.argv.insert(so.argv.end(),
                   {"--schema-db", options_.db_path, "--log-file", Path("director-log.db"),
                    "--commit-policy", options_.commit_policy, "--write-port", port(write_port_),
                    "--sql-port", port(sql_port_)});
  }
  for (const auto& a : options_.director_extra_args) so.argv.push_back(a);
  so.log_path = Path("director.log");
  VSC_ASSIGN_OR_RETURN(auto proc, Subprocess::Spawn(so));
  director_ = std::make_unique<Subprocess>(std::move(proc));
  auto text = WaitForFile(ready, 10s, director_.get());
  if (!text.ok()) return text.status().Annotate("starting the director (see " + so.log_path + ")");
  VSC_ASSIGN_OR_RETURN(auto j, ParseReady(*text, ready));
  lookup_port_ = j.at("lookup_port");
  control_port_ = j.at("control_port");
  heartbeat_port_ = j.at("heartbeat_port");
  admin_port_ = j.at("admin_port");
  ring_port_ = j.value("ring_port", 0);
  http_port_ = j.value("http_port", 0);
  if (options_.replication) {
    write_port_ = j.value("write_port", 0);
    sql_port_ = j.value("sql_port", 0);
    if (write_port_ == 0 || sql_port_ == 0) {
      return Internal("the director did not open its write and SQL ports (see " + so.log_path + ")");
    }
  }
  auto token = ReadFileText(token_file);
  if (token.ok()) token_ = token->substr(0, token->find('\n'));
  if (token_.empty()) return Internal("the director wrote no admin token to " + token_file);
  return Status::Ok();
}

Status LocalCluster::StartServer(int i) {
  Server& s = servers_[i];
  const std::string id = server_id(i);
  const std::string ready = Path(id + ".ready");
  ::unlink(ready.c_str());
  SpawnOptions so;
  so.argv = {options_.vsc_binary,
             "realserver",
             "--id", id,
             "--key-file", key_file_,
             "--listen", options_.host,
             "--director", net::HostPort(options_.host, control_port_ ? control_port_ : 9),
             "--db", server_db(i),
             "--workers", std::to_string(options_.rs_workers),
             "--log-level", options_.log_level,
             "--ready-file", ready};
  if (s.lookup_port != 0) {  // a restart keeps its ports, as a real host would
    so.argv.insert(so.argv.end(), {"--lookup-port", std::to_string(s.lookup_port),
                                   "--http-port", std::to_string(s.http_port)});
  }
  if (options_.relay) {
    so.argv.insert(so.argv.end(), {"--relay", "--relay-port", std::to_string(s.relay_port)});
  }
  for (const auto& a : options_.rs_extra_args) so.argv.push_back(a);
  so.log_path = Path(id + ".log");
  if (options_.rs_cpu_quota > 0) {
    if (s.cgroup.empty()) {
      s.cgroup = "/sys/fs/cgroup/cpu/vsc-" + std::to_string(getpid()) + "-" + id;
      std::error_code ec;
      fs::create_directories(s.cgroup, ec);
      if (ec) {
        s.cgroup.clear();
        return IoError("cannot create cgroup (needs root and the v1 cpu controller): " +
                       ec.message());
      }
      VSC_RETURN_IF_ERROR(WriteFileText(s.cgroup + "/cpu.cfs_period_us", "100000\n"));
      VSC_RETURN_IF_ERROR(WriteFileText(
          s.cgroup + "/cpu.cfs_quota_us",
          std::to_string(static_cast<int64_t>(options_.rs_cpu_quota * 100000)) + "\n"));
    }
    so.cgroup_procs = s.cgroup + "/cgroup.procs";
  }
  VSC_ASSIGN_OR_RETURN(auto proc, Subprocess::Spawn(so));
  s.process = std::make_unique<Subprocess>(std::move(proc));
  auto text = WaitForFile(ready, 10s, s.process.get());
  if (!text.ok()) return text.status().Annotate("starting " + id + " (see " + so.log_path + ")");
  VSC_ASSIGN_OR_RETURN(auto j, ParseReady(*text, ready));
  s.lookup_port = j.at("lookup_port");
  s.http_port = j.at("http_port");
  s.relay_port = j.value("relay_port", 0);
  return Status::Ok();
}

std::optional<int> LocalCluster::WaitServerExit(int i, Duration timeout) {
  if (i < 0 || i >= size() || !servers_[i].process) return std::nullopt;
  return servers_[i].process->Wait(timeout);
}

Status LocalCluster::SignalServer(int i, int sig) {
  if (i < 0 || i >= size() || !servers_[i].process) return InvalidArgument("no such server");
  return servers_[i].process->Signal(sig);
}

Status LocalCluster::RestartServer(int i) {
  if (i < 0 || i >= size()) return InvalidArgument("no such server");
  if (servers_[i].process && servers_[i].process->running()) {
    return FailedPrecondition(server_id(i) + " is still running");
  }
  servers_[i].process.reset();
  return StartServer(i);
}

Status LocalCluster::SignalDirector(int sig) {
  if (!director_) return FailedPrecondition("no director");
  return director_->Signal(sig);
}

Status LocalCluster::RestartDirector() {
  if (director_ && director_->running()) return FailedPrecondition("the director is still running");
  director_.reset();
  return StartDirector();
}

Result<nlohmann::json> LocalCluster::AdminGet(const std::string& target) {
  auto r = net::HttpRequestSync("127.0.0.1", admin_port_, "GET", target, "",
                                {{"Authorization", "Bearer " + token_}}, 5s);
  if (!r.ok()) return r.status();
  if (r->status != 200) return Unavailable("GET " + target + ": HTTP " + std::to_string(r->status) + " " + r->body);
  auto j = nlohmann::json::parse(r->body, nullptr, false);
  if (j.is_discarded()) return nlohmann::json(r->body);  // /metrics is text
  return j;
}

Result<nlohmann::json> LocalCluster::AdminPost(const std::string& target,
                                               const nlohmann::json& body) {
  auto r = net::HttpRequestSync("127.0.0.1", admin_port_, "POST", target, body.dump(),
                                {{"Authorization", "Bearer " + token_},
                                 {"Content-Type", "application/json"}},
                                5s);
  if (!r.ok()) return r.status();
  auto j = nlohmann::json::parse(r->body, nullptr, false);
  if (r->status != 200) {
    return FailedPrecondition("POST " + target + ": HTTP " + std::to_string(r->status) + " " + r->body);
  }
  return j;
}

Result<std::string> LocalCluster::ServerState(const std::string& id) {
  VSC_ASSIGN_OR_RETURN(auto status, AdminGet("/v1/status"));
  for (const auto& s : status.at("services").at(0).at("servers")) {
    if (s.at("id") == id) return s.at("state").get<std::string>();
  }
  return std::string();
}

Status LocalCluster::WaitForState(const std::string& id, const std::string& state,
                                  Duration timeout) {
  RealClock clock;
  const TimePoint deadline = clock.Now() + timeout;
  std::string last;
  for (;;) {
    auto s = ServerState(id);
    if (s.ok()) {
      last = *s;
      if (last == state) return Status::Ok();
    }
    if (clock.Now() >= deadline) {
      return Unavailable(id + " did not become " + state + " (last state: " +
                         (last.empty() ? "unlisted" : last) + ")");
    }
    timespec ts{0, 10'000'000};
    nanosleep(&ts, nullptr);
  }
}

Status LocalCluster::WaitAllActive(Duration timeout) {
  for (int i = 0; i < size(); ++i) VSC_RETURN_IF_ERROR(WaitForState(server_id(i), "ACTIVE", timeout));
  return Status::Ok();
}

void LocalCluster::Stop() {
  for (auto& s : servers_) {
    if (s.process) {
      s.process->Signal(SIGCONT).ok();  // a stopped process cannot act on SIGTERM
      s.process->Terminate(3s);
      s.process.reset();
    }
    if (!s.cgroup.empty()) {
      ::rmdir(s.cgroup.c_str());
      s.cgroup.clear();
    }
  }
  if (director_) {
    director_->Terminate(3s);
    director_.reset();
  }
  // Without replication the copies are scratch copies of a read-only database: a benchmark
  // with several steps would otherwise leave one set per step behind.
  if (!options_.replication) {
    for (int i = 0; i < size(); ++i) RemoveDatabaseFiles(server_db(i));
  }
}

}  // namespace vsc::bench

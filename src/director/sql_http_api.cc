#include "director/sql_http_api.h"

#include <charconv>
#include <nlohmann/json.hpp>

#include "director/sql_http_json.h"

namespace vsc::director {
namespace {

constexpr std::string_view kJsonType = "application/json; charset=utf-8";
constexpr std::string_view kReplicationOff =
    "replication is not enabled on this director; start it with schema_db set (a new log) or "
    "an existing log_file";

net::HttpResponse Text(int status, std::string body) {
  net::HttpResponse r;
  r.status = status;
  r.content_type = "text/plain; charset=utf-8";
  r.body = std::move(body);
  if (!r.body.empty() && r.body.back() != '\n') r.body.push_back('\n');
  return r;
}

net::HttpResponse Empty(int status) {
  net::HttpResponse r;
  r.status = status;
  r.content_type.clear();
  return r;
}

bool Lowered(std::string_view a, std::string_view b) { return net::EqualsIgnoreCase(a, b); }

}  // namespace

SqlHttpApi::SqlHttpApi(asio::io_context& io, const proto::ClusterKey& key, const Clock& clock,
                       Replicator* replicator, SqlHttpOptions options)
    : io_(io),
      clock_(clock),
      replicator_(replicator),
      options_(std::move(options)),
      reader_(io, key, clock) {}

Result<SqlHttpApi::Flags> SqlHttpApi::ParseFlags(const net::HttpRequest& req) const {
  Flags f;
  f.started = clock_.Now();
  f.params = QueryParams::Parse(req.query);
  const QueryParams& q = f.params;
  f.pretty = q.Has("pretty");
  f.timings = q.Has("timings");
  f.transaction = q.Has("transaction");
  f.associative = q.Has("associative");
  f.blob_array = q.Has("blob_array");
  f.qualify_columns = q.Has("qualify_columns");
  // Issue 11: names the request's write so that a retry is applied at most once. The key
  // itself is checked by the Replicator (a bad one is a write error, as on the write port).
  if (auto key = req.Header("Idempotency-Key")) f.idempotency_key = std::string(*key);
  for (const char* key : {"timeout", "freshness", "db_timeout", "linearizable_timeout"}) {
    if (auto v = q.Get(key); v && !ParseGoDuration(*v).ok()) {
      return InvalidArgument(std::string(key) + " is not a valid duration");
    }
  }
  if (q.Has("freshness_strict") && !q.Has("freshness")) {
    return InvalidArgument("freshness_strict requires freshness");
  }
  if (auto v = q.Get("min_seq")) {
    auto [p, ec] = std::from_chars(v->data(), v->data() + v->size(), f.min_seq);
    if (ec != std::errc() || p != v->data() + v->size()) {
      return InvalidArgument("min_seq must be a sequence number (the seq a write returned)");
    }
  }
  const std::string level(q.Get("level").value_or("weak"));
  if (Lowered(level, "none")) {
    // freshness bounds how stale a none read may be: a read at the committed seq is never stale.
    f.level = q.Has("freshness") && *ParseGoDuration(*q.Get("freshness")) > 0 ? Level::kWeak
                                                                              : Level::kNone;
  } else if (Lowered(level, "strong")) {
    f.level = Level::kStrong;
  } else {
    f.level = Level::kWeak;  // weak, linearizable, auto, and anything unknown (as rqlite)
  }
  return f;
}

net::HttpResponse SqlHttpApi::Json(std::string body, const Flags& flags) const {
  net::HttpResponse r;
  r.content_type = std::string(kJsonType);
  r.body = flags.pretty ? PrettyJson(body) : std::move(body);
  r.headers.emplace_back("X-RQLITE-SERVED-BY", options_.advertise);
  return r;
}

asio::awaitable<net::HttpResponse> SqlHttpApi::Handle(net::HttpRequest req) {
  net::HttpResponse resp;
  const std::string& path = req.path;
  const std::string& m = req.method;
  auto starts = [&](std::string_view p) { return path.rfind(p, 0) == 0; };
  auto flags = ParseFlags(req);
  if (m == "OPTIONS") {
    resp = Empty(200);
  } else if (!Authorized(req)) {
    resp = Empty(401);
  } else if (!flags.ok()) {
    resp = Text(400, flags.status().message());
  } else if (starts("/db/execute") || starts("/db/query") || starts("/db/request") ||
             starts("/db/backup") || starts("/db/load")) {
    const bool get_ok = starts("/db/query") || starts("/db/backup");
    const bool post_ok = !starts("/db/backup");
    if (!((m == "GET" && get_ok) || (m == "POST" && post_ok))) {
      resp = Empty(405);
    } else if (replicator_ == nullptr) {
      resp = Text(503, std::string(kReplicationOff));
    } else if (starts("/db/load")) {
      resp = Text(501,
                  "loading is not supported by vscluster's HTTP API: restore a database by "
                  "starting a new log with schema_db set to the file");
    } else if (starts("/db/backup")) {
      resp = co_await Backup(*flags);
    } else if (flags->params.Has("queue")) {
      resp = Text(400,
                  "queued writes (queue) are not supported: vscluster answers a write once the "
                  "commit policy is met; drop the queue parameter");
    } else if (starts("/db/execute")) {
      resp = co_await Execute(req, *flags);
    } else if (starts("/db/query")) {
      resp = co_await Query(req, *flags);
    } else {
      resp = co_await Request(req, *flags);
    }
  } else if (starts("/status")) {
    resp = m == "GET" ? Status(*flags) : Empty(405);
  } else if (starts("/nodes")) {
    resp = m == "GET" ? Nodes(*flags) : Empty(405);
  } else if (starts("/readyz")) {
    resp = m == "GET" ? Readyz(*flags) : Empty(405);
  } else {
    resp = Empty(404);
  }
  resp.headers.emplace_back("X-RQLITE-VERSION", "vscluster");
  resp.headers.emplace_back("Access-Control-Allow-Methods", "OPTIONS, GET, POST");
  if (options_.users) {
    resp.headers.emplace_back("Access-Control-Allow-Headers", "Content-Type, Authorization");
    resp.headers.emplace_back("Access-Control-Allow-Credentials", "true");
    resp.headers.emplace_back("WWW-Authenticate", "Basic realm=\"rqlite\"");
  } else {
    resp.headers.emplace_back("Access-Control-Allow-Headers", "Content-Type");
  }
  co_return resp;
}

bool SqlHttpApi::Authorized(const net::HttpRequest& req) const {
  if (!options_.users) return true;
  static const std::pair<std::string_view, std::vector<std::string_view>> kPerms[] = {
      {"/db/execute", {"execute"}}, {"/db/query", {"query"}}, {"/db/request", {"execute", "query"}},
      {"/db/backup", {"backup"}},   {"/db/load", {"load"}},   {"/status", {"status"}},
      {"/nodes", {"status"}},       {"/readyz", {"ready"}}};
  for (const auto& [prefix, perms] : kPerms) {
    if (req.path.rfind(prefix, 0) != 0) continue;
    for (std::string_view perm : perms) {
      if (!options_.users->Allowed(req.Header("Authorization"), perm)) return false;
    }
    return true;
  }
  return true;  // unknown paths answer 404 to everyone
}

net::HttpResponse SqlHttpApi::Status(const Flags& flags) const {
  nlohmann::ordered_json j;
  j["store"]["node_id"] = "director";
  j["store"]["leader"] = {{"node_id", "director"}, {"addr", options_.advertise}};
  j["store"]["raft"]["state"] = "Leader";
  if (replicator_ != nullptr) {
    const ReplicationStatus st = replicator_->GetStatus();
    j["store"]["replication"] = {{"enabled", true},         {"epoch", st.epoch},
                                 {"last_seq", st.last_seq}, {"committed_seq", st.committed_seq},
                                 {"policy", st.policy},     {"replicas", st.replicas.size()}};
  } else {
    j["store"]["replication"] = {{"enabled", false}, {"error", kReplicationOff}};
  }
  j["http"] = {{"bind_addr", options_.advertise},
               {"auth", options_.users ? "enabled" : "disabled"},
               {"tls", {{"enabled", options_.https}}}};
  j["node"] = {{"id", "director"}};
  j["build"] = {{"version", "vscluster"}};
  return Json(j.dump(), flags);
}

net::HttpResponse SqlHttpApi::Nodes(const Flags& flags) const {
  nlohmann::ordered_json node = {
      {"id", "director"},
      {"api_addr", (options_.https ? "https://" : "http://") + options_.advertise},
      {"addr", options_.advertise},
      {"voter", true},
      {"reachable", true},
      {"leader", true}};
  nlohmann::ordered_json j;
  if (flags.params.Get("ver") == "2") {
    j["nodes"] = nlohmann::ordered_json::array({node});
  } else {
    j["director"] = node;
  }
  return Json(j.dump(), flags);
}

asio::awaitable<net::HttpResponse> SqlHttpApi::Backup(const Flags& flags) {
  if (auto fmt = flags.params.Get("fmt"); fmt && *fmt == "sql") {
    co_return Text(400,
                   "fmt=sql (a text dump) is not supported: fetch the SQLite file (no fmt) and "
                   "dump it with `sqlite3 FILE .dump`");
  }
  proto::ReadRequest req;
  req.set_backup(true);
  req.set_max_bytes(options_.max_result_bytes);
  std::string file;
  uint64_t announced = 0;
  // Every acknowledged write is in the copy (as for level=weak), and min_seq when given.
  const uint64_t min_seq = std::max(flags.min_seq, replicator_->committed_seq());
  auto r = co_await ReadFromReplica(
      std::move(req), min_seq, flags.started, [&file] { file.clear(); },
      [&file, &announced](const proto::ReadResponse& page) {
        file += page.file_chunk();
        announced = page.file_size();
      });
  if (!r.ok()) co_return Text(503, "backup: " + r.status().message());
  if (!r->ok) co_return Text(500, r->error);
  if (file.size() != announced) {
    co_return Text(500, "backup: replica " + r->replica_id + " sent " +
                            std::to_string(file.size()) + " bytes of a " +
                            std::to_string(announced) + "-byte file; retry");
  }
  net::HttpResponse resp;
  resp.content_type = "application/octet-stream";
  resp.body = std::move(file);
  resp.headers.emplace_back("X-Vsc-Seq", std::to_string(r->applied_seq));
  resp.headers.emplace_back("X-Vsc-Replica", r->replica_id);
  resp.headers.emplace_back("X-RQLITE-SERVED-BY", options_.advertise);
  co_return resp;
}

net::HttpResponse SqlHttpApi::Readyz(const Flags& flags) const {
  if (flags.params.Has("noleader")) return Text(200, "[+]node ok");
  if (replicator_ == nullptr)
    return Text(503, "[+]node ok\n[-]store: " + std::string(kReplicationOff));
  for (const ReadCandidate& c : replicator_->ReadCandidates()) {
    if (c.eligible) return Text(200, "[+]node ok\n[+]leader ok\n[+]store ok");
  }
  return Text(503, "[+]node ok\n[+]leader ok\n[-]store: no replica is in sync yet");
}

}  // namespace vsc::director

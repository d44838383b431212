// SqlHttpApi: the director's rqlite-compatible HTTP API (DESIGN §9a,
// shared/reference/rqlite_api.md), so curl and rqlite's client libraries work unchanged.
//
// - POST /db/execute: the statements go through the Replicator like the write port's (schema
//   mirror checks, sequencer, commit policy); with `transaction` they are one WriteRequest (one
//   seq, all or nothing), without it one WriteRequest each, submitted in the same turn so they
//   take consecutive seqs. The answer comes when the commit policy is met and carries `seq`.
//   An `Idempotency-Key` header (issue 11) names a request that makes one write (a transaction,
//   or a single write statement): a retry with the same key is applied at most once, and the
//   answer of a retry whose key was applied says `"duplicate": true` (with the original's seq).
// - GET|POST /db/query: each statement is read from one replica over its TCP read path
//   (SqlTcpReader), chosen by PickReplica as the SQL read port chooses: `level=none` any in-sync
//   replica (min_seq as given), `weak` (the default, also `linearizable`, `auto`) one that has
//   applied the director's committed seq, `strong` one that has applied every write sequenced
//   before the read arrived. `freshness` with `none` is served as `weak` (never staler).
//   A read no replica can serve yet waits, up to read_timeout, for replication progress.
// - POST /db/request: statements in order, each a write (execute) or a read (query) by its first
//   keyword (SELECT, WITH, VALUES, PRAGMA, EXPLAIN read).
// - GET /status, /nodes, /readyz: the fields rqlite clients read (store.leader; the legacy
//   nodes map). /db/load and queued writes (`queue`) are refused: not supported.
// - GET /db/backup: the SQLite file of one replica that has applied the committed seq (or
//   min_seq), copied there from one read snapshot and streamed over its TCP read path; the
//   seq it holds is in X-Vsc-Seq. Bounded by max_result_bytes.
// - With a users file, each endpoint needs rqlite's permission (execute, query, both for
//   request, status for /status and /nodes, ready, backup, load); else 401 with no body.
// With replication off every data path answers "replication is not enabled on this director".
//
// Thread: the control thread (the Replicator's). Lifetime: owned by the Director, destroyed
// after the HTTP server that calls it.
#pragma once

#include <asio.hpp>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/clock.h"
#include "director/replicator.h"
#include "director/sql_http_auth.h"
#include "director/sql_http_codec.h"
#include "director/sql_tcp_reader.h"
#include "net/http_parser.h"
#include "net/http_response.h"

namespace vsc::director {

struct SqlHttpOptions {
  std::string advertise;  // host:port of this API, for /status and /nodes
  bool https = false;     // the port speaks TLS (http_cert): api_addr is https://
  Duration read_timeout = std::chrono::seconds(2);
  // A replica chosen for a read may take this long for its first page and again for each next
  // one (or what remains of read_timeout, if more) before the read goes to another replica.
  Duration read_stall_timeout = std::chrono::seconds(10);
  uint64_t max_result_rows = 1000000;
  uint64_t max_result_bytes = uint64_t{128} << 20;
  SqlBodyLimits body;
  std::optional<HttpUsers> users;  // set: every request needs the endpoint's permission
};

class SqlHttpApi {
 public:
  // `replicator` is null when replication is off.
  SqlHttpApi(asio::io_context& io, const proto::ClusterKey& key, const Clock& clock,
             Replicator* replicator, SqlHttpOptions options);

  asio::awaitable<net::HttpResponse> Handle(net::HttpRequest request);
  // Replication progressed: reads waiting for a replica look again.
  void OnProgress();

 private:
  enum class Level { kNone, kWeak, kStrong };
  struct Flags {
    QueryParams params;
    bool pretty = false, timings = false, transaction = false, associative = false;
    bool blob_array = false, qualify_columns = false;
    Level level = Level::kWeak;
    uint64_t min_seq = 0;
    std::string idempotency_key;  // the Idempotency-Key header: one write request only
    TimePoint started{};
  };
  // 400 when an Idempotency-Key is given for a request that makes more than one write (each
  // statement without `transaction` is a write of its own).
  static vsc::Status KeyFitsWrites(const Flags& flags, size_t writes);
  // Flags from the query string; InvalidArgument naming the bad parameter (400).
  Result<Flags> ParseFlags(const net::HttpRequest& req) const;
  asio::awaitable<net::HttpResponse> Execute(const net::HttpRequest& req, const Flags& flags);
  asio::awaitable<net::HttpResponse> Query(const net::HttpRequest& req, const Flags& flags);
  asio::awaitable<net::HttpResponse> Request(const net::HttpRequest& req, const Flags& flags);
  // Writes (one batch with `transaction`): one result JSON per statement, and the last seq.
  asio::awaitable<std::vector<std::string>> Write(std::vector<proto::SqlStatement> statements,
                                                  const Flags& flags, uint64_t* seq);
  asio::awaitable<std::vector<proto::WriteResponse>> SubmitAll(
      std::vector<proto::WriteRequest> requests);
  // One read: its result JSON (rows or {"error": ...}).
  asio::awaitable<std::string> Read(proto::SqlStatement statement, uint64_t min_seq,
                                    const Flags& flags);
  // Sends `request` to a replica that has applied `min_seq` (PickReplica); one that cannot
  // answer (unreachable, not yet applied, installing a snapshot) is skipped for another, waiting
  // for replication progress until `started` + read_timeout. `restart` runs before each attempt
  // (drop the pages of a failed one), `sink` for each page. Unavailable ("timeout: ...") when no
  // replica answered in time; else the answer (ok, or the replica's error).
  asio::awaitable<Result<TcpReadResult>> ReadFromReplica(proto::ReadRequest request,
                                                         uint64_t min_seq, TimePoint started,
                                                         std::function<void()> restart,
                                                         SqlTcpReader::PageSink sink);
  // GET /db/backup: one in-sync replica's database file at a known seq (X-Vsc-Seq).
  asio::awaitable<net::HttpResponse> Backup(const Flags& flags);
  // Waits until progress or `until`; false when `until` passed.
  asio::awaitable<bool> WaitForProgress(TimePoint until);
  net::HttpResponse Status(const Flags& flags) const;
  net::HttpResponse Nodes(const Flags& flags) const;
  net::HttpResponse Readyz(const Flags& flags) const;
  net::HttpResponse Json(std::string body, const Flags& flags) const;
  // Whether the request holds every permission its path needs.
  bool Authorized(const net::HttpRequest& req) const;

  asio::io_context& io_;
  const Clock& clock_;
  Replicator* replicator_;
  SqlHttpOptions options_;
  SqlTcpReader reader_;
  uint64_t next_request_id_ = 1;
  // Timers of reads waiting for progress; OnProgress cancels them all (they then look again).
  std::vector<std::weak_ptr<asio::steady_timer>> waiting_;
};

}  // namespace vsc::director

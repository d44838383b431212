// The data endpoints of SqlHttpApi: execute, query and request (see sql_http_api.h).
#include <set>

#include "director/read_queue.h"
#include "director/sql_http_api.h"
#include "director/sql_http_json.h"
#include "net/as_tuple.h"
#include "replication/sql_util.h"

namespace vsc::director {

using net::kTuple;
namespace {

struct PendingWrite {
  explicit PendingWrite(asio::io_context& io) : timer(io) {
    timer.expires_at(asio::steady_timer::time_point::max());
  }
  asio::steady_timer timer;  // cancelled when the answer is in
  std::optional<proto::WriteResponse> response;
};

bool IsRead(const std::string& sql) {
  const std::string k = replication::FirstKeyword(sql);
  return k == "SELECT" || k == "WITH" || k == "VALUES" || k == "PRAGMA" || k == "EXPLAIN";
}

WriteOutcome Outcome(const proto::WriteResponse& r, int index, size_t statements) {
  WriteOutcome w;
  w.duplicate = r.duplicate();
  if (!r.ok()) {
    w.error = r.error();
    return w;
  }
  if (index < r.statements_size()) {
    w.last_insert_id = r.statements(index).last_insert_id();
    w.rows_affected = r.statements(index).rows_affected();
  } else if (statements == 1) {
    w.rows_affected = r.rows_changed();
  }
  return w;
}

// Statement i of a batch that succeeded, or that ran before the failing one of a failed batch.
WriteOutcome RolledBackOrDone(const proto::WriteResponse& r, size_t i, size_t statements) {
  if (r.ok()) return Outcome(r, static_cast<int>(i), statements);
  WriteOutcome w;
  w.duplicate = r.duplicate();
  if (i < static_cast<size_t>(r.statements_size())) {
    w.last_insert_id = r.statements(static_cast<int>(i)).last_insert_id();
    w.rows_affected = r.statements(static_cast<int>(i)).rows_affected();
  }
  return w;
}

net::HttpResponse BadRequest(const Status& s) {
  net::HttpResponse r;
  r.status = 400;
  r.content_type = "text/plain; charset=utf-8";
  r.body = s.message() + "\n";
  return r;
}

bool TextPlain(const net::HttpRequest& req) {
  auto ct = req.Header("Content-Type");
  return ct && ct->size() >= 10 && net::EqualsIgnoreCase(ct->substr(0, 10), "text/plain");
}

double Seconds(Duration d) { return std::chrono::duration<double>(d).count(); }

}  // namespace

vsc::Status SqlHttpApi::KeyFitsWrites(const Flags& flags, size_t writes) {
  if (flags.idempotency_key.empty() || writes <= 1) return Status::Ok();
  return InvalidArgument("Idempotency-Key names one write, and this request makes " +
                         std::to_string(writes) +
                         " (one per statement): send one write statement per keyed request, or "
                         "the statements as one ?transaction");
}

asio::awaitable<std::vector<proto::WriteResponse>> SqlHttpApi::SubmitAll(
    std::vector<proto::WriteRequest> requests) {
  std::vector<std::shared_ptr<PendingWrite>> pending;
  for (proto::WriteRequest& req : requests) {
    auto p = std::make_shared<PendingWrite>(io_);
    req.set_request_id(next_request_id_++);
    replicator_->Submit(req, [p](const proto::WriteResponse& r) {
      p->response = r;
      p->timer.cancel();
    });
    pending.push_back(std::move(p));
  }
  std::vector<proto::WriteResponse> out;
  for (auto& p : pending) {
    while (!p->response) co_await p->timer.async_wait(kTuple);
    out.push_back(std::move(*p->response));
  }
  co_return out;
}

asio::awaitable<std::vector<std::string>> SqlHttpApi::Write(
    std::vector<proto::SqlStatement> statements, const Flags& flags, uint64_t* seq) {
  std::vector<proto::WriteRequest> requests;
  const size_t n = statements.size();
  for (proto::SqlStatement& st : statements) {
    if (requests.empty() || !flags.transaction) requests.emplace_back();
    *requests.back().add_statements() = std::move(st);
  }
  // KeyFitsWrites made sure a key names a single request.
  if (!flags.idempotency_key.empty() && requests.size() == 1) {
    requests.front().set_idempotency_key(flags.idempotency_key);
  }
  std::vector<proto::WriteResponse> answers = co_await SubmitAll(std::move(requests));
  std::vector<std::string> results;
  for (const proto::WriteResponse& a : answers) {
    if (a.ok()) *seq = std::max(*seq, a.seq());
  }
  if (flags.transaction) {
    const proto::WriteResponse& a = answers.front();
    // A failed batch: the statements before the failing one ran and were rolled back (shown
    // with what they did, as rqlite shows them); the failing one has the error; later ones
    // never ran (rqlite's shape).
    const size_t shown = a.ok() ? n : (a.failed_statement() > 0 ? a.failed_statement() : 1);
    for (size_t i = 0; i < shown; ++i) {
      const bool failing = !a.ok() && i + 1 == shown;
      WriteOutcome w = failing ? Outcome(a, 0, n) : RolledBackOrDone(a, i, n);
      results.push_back(WriteResultJson(w, flags.associative));
    }
  } else {
    for (const proto::WriteResponse& a : answers) {
      results.push_back(WriteResultJson(Outcome(a, 0, 1), flags.associative));
    }
  }
  co_return results;
}

asio::awaitable<net::HttpResponse> SqlHttpApi::Execute(const net::HttpRequest& req,
                                                       const Flags& flags) {
  auto statements = ParseSqlBody(req.body, TextPlain(req), options_.body);
  if (!statements.ok()) co_return BadRequest(statements.status());
  const size_t writes = flags.transaction ? 1 : statements->size();
  if (vsc::Status fits = KeyFitsWrites(flags, writes); !fits.ok()) co_return BadRequest(fits);
  uint64_t seq = 0;
  std::vector<std::string> results;
  if (!statements->empty()) results = co_await Write(std::move(*statements), flags, &seq);
  std::optional<double> time;
  if (flags.timings) time = Seconds(clock_.Now() - flags.started);
  co_return Json(EnvelopeJson(results, std::nullopt, time, seq), flags);
}

asio::awaitable<net::HttpResponse> SqlHttpApi::Query(const net::HttpRequest& req,
                                                     const Flags& flags) {
  std::vector<proto::SqlStatement> statements;
  if (req.method == "GET") {
    if (auto q = flags.params.Get("q")) {
      if (q->empty()) co_return BadRequest(InvalidArgument("query parameter not set"));
      statements.emplace_back().set_sql(std::string(*q));
    }
  } else {
    auto parsed = ParseSqlBody(req.body, TextPlain(req), options_.body);
    if (!parsed.ok()) co_return BadRequest(parsed.status());
    statements = std::move(parsed).value();
  }
  uint64_t min_seq = flags.min_seq;
  if (min_seq > replicator_->last_seq()) {
    co_return BadRequest(InvalidArgument(
        "min_seq " + std::to_string(min_seq) + " is beyond the last sequenced write (" +
        std::to_string(replicator_->last_seq()) + "); pass the seq a write returned"));
  }
  if (flags.level == Level::kWeak) min_seq = std::max(min_seq, replicator_->committed_seq());
  if (flags.level == Level::kStrong) min_seq = std::max(min_seq, replicator_->last_seq());
  std::vector<std::string> results;
  for (proto::SqlStatement& st : statements) {
    results.push_back(co_await Read(std::move(st), min_seq, flags));
  }
  std::optional<double> time;
  if (flags.timings) time = Seconds(clock_.Now() - flags.started);
  co_return Json(EnvelopeJson(results, std::nullopt, time), flags);
}

asio::awaitable<net::HttpResponse> SqlHttpApi::Request(const net::HttpRequest& req,
                                                       const Flags& flags) {
  auto statements = ParseSqlBody(req.body, /*text_plain=*/false, options_.body);
  if (!statements.ok()) co_return BadRequest(statements.status());
  bool any_read = false;
  size_t writes = 0;
  for (const auto& st : *statements) {
    any_read |= IsRead(st.sql());
    writes += IsRead(st.sql()) ? 0 : 1;
  }
  if (vsc::Status fits = KeyFitsWrites(flags, flags.transaction ? 1 : writes); !fits.ok()) {
    co_return BadRequest(fits);
  }
  if (flags.transaction && any_read) {
    co_return BadRequest(InvalidArgument(
        "transaction with reads in /db/request is not supported: send the writes to "
        "/db/execute?transaction and the reads to /db/query"));
  }
  uint64_t seq = 0;
  std::vector<std::string> results;
  if (flags.transaction) {
    results = co_await Write(std::move(*statements), flags, &seq);
  } else {
    for (proto::SqlStatement& st : *statements) {
      if (IsRead(st.sql())) {
        uint64_t min_seq = std::max(flags.min_seq, seq);  // reads see the writes before them
        if (flags.level != Level::kNone) min_seq = std::max(min_seq, replicator_->committed_seq());
        results.push_back(co_await Read(std::move(st), min_seq, flags));
      } else {
        std::vector<proto::SqlStatement> one;
        one.push_back(std::move(st));
        auto r = co_await Write(std::move(one), flags, &seq);
        results.push_back(std::move(r.front()));
      }
    }
  }
  std::optional<double> time;
  if (flags.timings) time = Seconds(clock_.Now() - flags.started);
  co_return Json(EnvelopeJson(results, std::nullopt, time, seq), flags);
}

asio::awaitable<std::string> SqlHttpApi::Read(proto::SqlStatement statement, uint64_t min_seq,
                                              const Flags& flags) {
  proto::ReadRequest req;
  *req.mutable_statement() = std::move(statement);
  req.set_max_rows(options_.max_result_rows);
  req.set_max_bytes(options_.max_result_bytes);
  const RowsFormat format{flags.associative, flags.blob_array, flags.qualify_columns};
  RowsEncoder enc(format);
  auto r = co_await ReadFromReplica(
      std::move(req), min_seq, flags.started, [&enc, format] { enc = RowsEncoder(format); },
      [&enc](const proto::ReadResponse& page) { enc.AddPage(page); });
  if (!r.ok()) co_return ErrorResultJson(r.status().message());
  co_return r->ok ? enc.Finish() : ErrorResultJson(r->error);
}

asio::awaitable<Result<TcpReadResult>> SqlHttpApi::ReadFromReplica(proto::ReadRequest request,
                                                                   uint64_t min_seq,
                                                                   TimePoint started,
                                                                   std::function<void()> restart,
                                                                   SqlTcpReader::PageSink sink) {
  const TimePoint deadline = started + options_.read_timeout;
  std::string last_error = "no replica is ACTIVE and in sync";
  if (min_seq > 0) last_error += " at seq " + std::to_string(min_seq);
  std::set<std::string> failed;  // replicas that could not answer this read
  for (;;) {
    std::vector<ReadCandidate> candidates = replicator_->ReadCandidates();
    for (ReadCandidate& c : candidates) {
      if (c.sql_tcp.port() == 0 || failed.count(c.id)) c.eligible = false;
    }
    if (auto pick = PickReplica(candidates, min_seq)) {
      const ReadCandidate& c = candidates[*pick];
      proto::ReadRequest req = request;
      req.set_request_id(next_request_id_++);
      req.set_min_seq(min_seq);
      restart();  // the pages of an attempt that failed midway are dropped
      const TimePoint now = clock_.Now();
      TcpReadResult r = co_await reader_.Read(
          c.sql_tcp, std::move(req), std::max(deadline - now, options_.read_stall_timeout), sink);
      // An SQL error is the answer; a replica that could not answer is skipped for this read.
      if (r.transport.ok() && (r.ok || (r.error.rfind("not yet applied", 0) != 0 &&
                                        r.error.rfind("replica is installing", 0) != 0))) {
        co_return r;
      }
      last_error = r.transport.ok() ? r.error : r.transport.message();
      failed.insert(c.id);
      continue;
    }
    if (!co_await WaitForProgress(deadline)) {
      co_return Unavailable("timeout: no replica could serve the read within " +
                            std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(
                                               options_.read_timeout)
                                               .count()) +
                            " ms (" + last_error + ")");
    }
    failed.clear();
  }
}

asio::awaitable<bool> SqlHttpApi::WaitForProgress(TimePoint until) {
  const TimePoint now = clock_.Now();
  if (now >= until) co_return false;
  auto timer = std::make_shared<asio::steady_timer>(io_);
  // The wait is bounded by `until` and by a short period, so a replica that became eligible
  // through a heartbeat (no replication progress) is seen too.
  timer->expires_after(std::min(until - now, Duration(std::chrono::milliseconds(50))));
  waiting_.push_back(timer);
  co_await timer->async_wait(kTuple);
  co_return true;
}

void SqlHttpApi::OnProgress() {
  std::vector<std::weak_ptr<asio::steady_timer>> waiting;
  waiting.swap(waiting_);
  for (auto& w : waiting) {
    if (auto t = w.lock()) t->cancel();
  }
}

}  // namespace vsc::director

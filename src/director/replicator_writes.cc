// The Replicator's write path: a write's admission (Submit: sizes, the schema mirror, the commit
// policy's participants), its queueing, and Flush, which sequences the queue into log entries,
// keeps them in the recent window and streams them (replicator.cc holds the rest of the class).
#include <spdlog/spdlog.h>

#include <map>
#include <set>
#include <string>

#include "director/replication_wire.h"
#include "director/replicator.h"

namespace vsc::director {

using replication::Entry;

namespace {

// The recent window of sequenced entries kept in memory for replicas that are a little behind.
constexpr size_t kRecentMaxEntries = 65536;
constexpr uint64_t kRecentMaxBytes = 64ull << 20;

}  // namespace

void Replicator::Refuse(const WriteDone& done, uint64_t request_id, int code,
                        const std::string& error) {
  switch (code) {
    case kWriteOverloaded:
      counters_.writes_overloaded.Add();
      break;
    case kWriteUnavailable:
      counters_.writes_unavailable.Add();
      break;
    default:
      counters_.writes_refused.Add();
      break;
  }
  proto::WriteResponse resp;
  resp.set_request_id(request_id);
  resp.set_ok(false);
  resp.set_code(code);
  resp.set_error(error);
  done(resp);
}

std::set<std::string> Replicator::Participants() const {
  std::set<std::string> out;
  for (const auto& [id, r] : replicas_) {
    if (r.link && r.state == ReplicationState::kInSync) out.insert(id);
  }
  return out;
}

void Replicator::Submit(const proto::WriteRequest& request, WriteDone done) {
  const uint64_t rid = request.request_id();
  if (stopped_) {
    Refuse(done, rid, kWriteUnavailable, "unavailable: the director is stopping; not applied");
    return;
  }
  if (HandledByKey(request, done)) return;
  MaybeFinishPromotion();  // the window may have passed since the last tick
  if (auto why = NotSequencing()) {
    Refuse(done, rid, kWriteUnavailable, "unavailable: " + *why + "; the write was not applied");
    return;
  }
  if (waiting_.size() + batch_.size() >= options_.update_queue) {
    Refuse(done, rid, kWriteOverloaded,
           "overloaded: update queue full (" + std::to_string(options_.update_queue) +
               "); the write was not applied, retry later");
    return;
  }
  const int n = request.statements_size();
  if (n == 0) {
    Refuse(done, rid, kWriteRefused,
           "statement refused: the request holds no statement; send one statement, or several "
           "as an atomic batch");
    return;
  }
  if (static_cast<size_t>(n) > kMaxBatchStatements) {
    Refuse(done, rid, kWriteRefused,
           "statement refused: a batch holds at most " + std::to_string(kMaxBatchStatements) +
               " statements, this one " + std::to_string(n) + "; split it");
    return;
  }
  Accepted a;
  a.request_id = rid;
  size_t payload = 0;
  for (int i = 0; i < n; ++i) {
    const proto::SqlStatement& s = request.statements(i);
    const std::string where = n > 1 ? "statement " + std::to_string(i + 1) + ": " : "";
    if (s.sql().size() > kMaxSqlBytes) {
      Refuse(done, rid, kWriteRefused,
             "statement refused: " + where + "the SQL text is " + std::to_string(s.sql().size()) +
                 " bytes, over the limit of " + std::to_string(kMaxSqlBytes) +
                 "; bind large values as parameters");
      return;
    }
    if (static_cast<size_t>(s.params_size()) > kMaxParams) {
      Refuse(done, rid, kWriteRefused,
             "statement refused: " + where + std::to_string(s.params_size()) +
                 " parameters, over the limit of " + std::to_string(kMaxParams));
      return;
    }
    replication::Statement st = FromProto(s);
    payload += st.sql.size();
    for (const auto& p : st.params) payload += p.bytes.size() + 8;
    if (payload > kMaxWritePayload) {
      Refuse(done, rid, kWriteRefused,
             "statement refused: the request carries more than " +
                 std::to_string(kMaxWritePayload) + " bytes of SQL and parameters; split it");
      return;
    }
    a.statements.push_back(std::move(st));
  }
  if (queued_bytes_ + payload > options_.update_queue_bytes) {
    Refuse(done, rid, kWriteOverloaded,
           "overloaded: update queue full (" + std::to_string(queued_bytes_) +
               " bytes of SQL and parameters waiting, the bound is update_queue_bytes " +
               std::to_string(options_.update_queue_bytes) +
               "); the write was not applied, retry later");
    return;
  }
  a.bytes = payload;
  std::vector<replication::StatementKind> kinds;
  if (a.statements.size() == 1) {
    auto kind = mirror_->Check(a.statements[0]);
    if (!kind.ok()) {
      Refuse(done, rid, kWriteRefused, kind.status().message());
      return;
    }
    kinds.push_back(*kind);
  } else {
    // DDL early in a batch is visible to the statements after it.
    auto checked = mirror_->CheckBatch(a.statements);
    if (!checked.ok()) {
      Refuse(done, rid, kWriteRefused, checked.status().message());
      return;
    }
    kinds = std::move(checked).value();
  }
  for (size_t i = 0; i < kinds.size(); ++i) {
    const std::string where = n > 1 ? "statement " + std::to_string(i + 1) + ": " : "";
    if (kinds[i] == replication::StatementKind::kRead) {
      Refuse(done, rid, kWriteRefused,
             "statement refused: " + where +
                 "read-only statement on the write port; send reads to the SQL read port");
      return;
    }
    if (kinds[i] == replication::StatementKind::kDdl) a.ddl.push_back(i);
  }
  if (!a.ddl.empty() && !request.idempotency_key().empty()) {
    Refuse(done, rid, kWriteRefused,
           "statement refused: an idempotency key cannot be used with DDL (CREATE, DROP, "
           "ALTER); send DDL without a key, written to be retried safely (IF NOT EXISTS, IF "
           "EXISTS)");
    return;
  }
  a.key = request.idempotency_key();
  if (Participants().empty()) {
    Refuse(done, rid, kWriteUnavailable,
           "unavailable: no replica is in sync (every replica is down, catching up or waiting "
           "for a snapshot); the write was not applied");
    return;
  }
  counters_.writes_accepted.Add();
  a.done = std::move(done);
  Enqueue(std::move(a));
}

void Replicator::Enqueue(Accepted accepted) {
  queued_bytes_ += accepted.bytes;
  batch_.push_back(std::move(accepted));
  if (!flush_posted_) {
    flush_posted_ = true;
    // Every write accepted before this handler runs joins the same Append (group commit).
    asio::post(io_, [this] { Flush(); });
  }
}

Result<uint64_t> Replicator::StartVerify() {
  if (stopped_) return Unavailable("the director is stopping");
  if (auto why = NotSequencing()) return Unavailable(*why);
  if (Participants().empty()) {
    return Unavailable("no replica is in sync; nothing to verify");
  }
  Accepted a;
  a.kind = Entry::Kind::kChecksum;
  const uint64_t before = verifies_.last_seq();
  batch_.push_back(std::move(a));
  Flush();  // at once, so the caller learns the marker's seq
  if (verifies_.last_seq() == before) {
    return Unavailable("the checksum marker could not be sequenced");
  }
  return verifies_.last_seq();
}

void Replicator::Flush() {
  flush_posted_ = false;
  if (batch_.empty() || stopped_) return;
  std::vector<Accepted> batch = std::move(batch_);
  batch_.clear();
  // Refused below, or moved to waiting_ (which counts its own bytes again).
  for (const Accepted& a : batch) queued_bytes_ -= a.bytes;
  const std::set<std::string> parts = Participants();
  // Accepted this turn while the lease was held; it may have lapsed since.
  const std::optional<std::string> not_sequencing = NotSequencing();
  if (not_sequencing) {
    for (Accepted& a : batch) {
      if (a.done) {
        Refuse(a.done, a.request_id, kWriteUnavailable,
               "unavailable: " + *not_sequencing + "; the write was not applied");
      }
    }
    return;
  }
  if (parts.empty()) {
    for (Accepted& a : batch) {
      if (a.done) {
        Refuse(a.done, a.request_id, kWriteUnavailable,
               "unavailable: no replica is in sync; the write was not applied");
      }
    }
    return;
  }
  std::vector<Entry> entries;
  entries.reserve(batch.size());
  const int64_t now = clock_.WallMicros();
  for (Accepted& a : batch) {
    entries.push_back(sequencer_->Assign(a.statements, a.kind, now));
    if (!a.key.empty()) {
      entries.back().idempotency_key = a.key;
      entries.back().idempotency_window = options_.idempotency_window;
    }
  }
  if (Status s = log_->Append(entries); !s.ok()) {
    spdlog::error("replication log append failed: {}", s.ToString());
    sequencer_ = std::make_unique<replication::Sequencer>(log_->epoch(), log_->last_seq(),
                                                          log_->last_ts_micros());
    for (Accepted& a : batch) {
      if (a.done) {
        Refuse(a.done, a.request_id, kWriteLogFailed,
               "the director could not write its log (" + s.message() +
                   "); the write was not applied");
      }
    }
    return;
  }
  counters_.group_commits.Add();
  counters_.entries_sequenced.Add(entries.size());
  for (size_t i = 0; i < batch.size(); ++i) {
    Entry& e = entries[i];
    for (size_t idx : batch[i].ddl) {
      if (Status s = mirror_->ApplyDdl(e.statements[idx]); !s.ok()) {
        spdlog::warn("schema mirror: seq {}: {}", e.seq, s.ToString());
      }
    }
    Status tracked = tracker_.Track(e.seq, parts);
    if (!tracked.ok()) spdlog::error("commit tracker: seq {}: {}", e.seq, tracked.ToString());
    if (batch[i].done) Wait(e.seq, batch[i]);
    if (e.kind == Entry::Kind::kChecksum) {
      std::set<std::string> expected;
      std::map<std::string, std::string> skipped;
      for (const auto& [id, r] : replicas_) {
        if (!r.link) continue;
        if (r.state == ReplicationState::kInSync || r.state == ReplicationState::kCatchingUp) {
          expected.insert(id);
        } else {
          skipped[id] = std::string(ReplicationStateName(r.state));
        }
      }
      verifies_.Start(e.seq, clock_.Now(), std::move(expected), std::move(skipped));
    }
    // Encoded here once for every replica stream (stream_entry.h).
    recent_.push_back(MakeStreamEntry(std::move(e)));
    recent_bytes_ += recent_.back()->payload_bytes;
  }
  while (!recent_.empty() &&
         (recent_.size() > kRecentMaxEntries || recent_bytes_ > kRecentMaxBytes)) {
    recent_bytes_ -= recent_.front()->payload_bytes;
    recent_.pop_front();
    recent_first_++;
  }
  PumpAll();
}

}  // namespace vsc::director

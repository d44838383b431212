// The Replicator's idempotency keys (issue 11): a keyed write is sequenced with its key, and the
// replicas apply a key once (replication/idempotency_table.h). Here the director's part:
// - a bad key is refused before sequencing; so is a keyed write holding DDL (below);
// - a retry of a key whose write is sequenced and still waiting for its commit policy joins
//   that write's answer instead of being sequenced again (one in the same event-loop turn, not
//   yet sequenced, is sequenced: the replicas answer it as a duplicate);
// - a keyed write whose outcome is unknown says to retry with the same key;
// - a duplicate's answer carries `duplicate` and the original's seq and outcome.
// Keyed DDL is refused: the director applies DDL to its schema mirror and records it in the
// log's schema when it sequences it, before any replica says whether the key was a duplicate,
// so a retried DDL (DROP TABLE t after t was created again) would change the mirror and not the
// replicas. Idempotent DDL (IF NOT EXISTS, IF EXISTS) is retried safely without a key.
#include "director/replicator.h"

namespace vsc::director {

bool Replicator::HandledByKey(const proto::WriteRequest& request, WriteDone& done) {
  const std::string& key = request.idempotency_key();
  if (key.empty()) return false;
  if (Status valid = replication::ValidateIdempotencyKey(key); !valid.ok()) {
    Refuse(done, request.request_id(), kWriteRefused,
           valid.message() + "; the write was not applied");
    return true;
  }
  auto it = waiting_keys_.find(key);
  if (it == waiting_keys_.end()) return false;
  auto w = waiting_.find(it->second);
  if (w == waiting_.end()) return false;
  w->second.joined.emplace_back(request.request_id(), std::move(done));
  return true;
}

void Replicator::Wait(uint64_t seq, Accepted& accepted) {
  if (!accepted.key.empty()) waiting_keys_[accepted.key] = seq;
  waiting_[seq] = Waiting{accepted.request_id,
                          std::move(accepted.done),
                          accepted.bytes,
                          std::move(accepted.key),
                          {},
                          {}};
  queued_bytes_ += accepted.bytes;
}

void Replicator::CountAnswer(const proto::WriteResponse& resp) {
  if (resp.ok()) {
    counters_.writes_committed.Add();
  } else if (resp.code() != kWriteUnknown) {
    counters_.writes_failed.Add();
  }
}

void Replicator::AnswerWaiting(uint64_t seq, Waiting& w, proto::WriteResponse resp) {
  if (!w.key.empty()) {
    if (auto it = waiting_keys_.find(w.key); it != waiting_keys_.end() && it->second == seq) {
      waiting_keys_.erase(it);
    }
    if (resp.code() == kWriteUnknown) {
      resp.set_error(resp.error() +
                     "; unknown outcome: retry with the same idempotency key, which is applied "
                     "at most once");
    }
  }
  queued_bytes_ -= w.bytes;
  resp.set_request_id(w.request_id);
  WriteDone done = std::move(w.done);
  auto joined = std::move(w.joined);
  done(resp);
  for (auto& [request_id, join_done] : joined) {
    resp.set_request_id(request_id);
    join_done(resp);
  }
}

}  // namespace vsc::director

#include "replication/applier.h"

#include <algorithm>

#include "replication/digest.h"

namespace vsc::replication {

Result<std::unique_ptr<Applier>> Applier::Create(std::unique_ptr<Executor> executor) {
  VSC_ASSIGN_OR_RETURN(ReplicaState state, executor->LoadState());
  std::unique_ptr<Applier> applier(new Applier(std::move(executor)));
  applier->state_ = state;
  return applier;
}

Result<std::vector<EntryResult>> Applier::Apply(std::span<const Entry> entries) {
  return Apply(entries, state_.fence_epoch);
}

Status Applier::RaiseFence(uint64_t epoch) {
  if (epoch <= state_.fence_epoch) return Status::Ok();
  ReplicaState next = state_;
  next.fence_epoch = epoch;
  VSC_RETURN_IF_ERROR(executor_->Begin());
  if (Status st = executor_->Commit(next); !st.ok()) {
    executor_->Rollback();
    if (auto stored = executor_->LoadState(); stored.ok()) state_ = *stored;
    return st;
  }
  state_ = next;
  return Status::Ok();
}

Result<std::vector<EntryResult>> Applier::Apply(std::span<const Entry> entries, uint64_t epoch) {
  if (!Admits(epoch)) {
    return FailedPrecondition("replica: refused a message from epoch " + std::to_string(epoch) +
                              ", older than epoch " + std::to_string(state_.fence_epoch) +
                              " this replica has seen: another director sequences now");
  }
  size_t first = 0;
  while (first < entries.size() && entries[first].seq <= state_.applied_seq) ++first;
  const std::span<const Entry> fresh = entries.subspan(first);
  for (size_t i = 0; i < fresh.size(); ++i) {
    const uint64_t want = state_.applied_seq + 1 + i;
    if (fresh[i].seq != want) {
      return FailedPrecondition("replica: entry seq " + std::to_string(fresh[i].seq) +
                                " does not follow " + std::to_string(want - 1) +
                                "; send the entries from seq " + std::to_string(want) +
                                " in order");
    }
  }
  std::vector<EntryResult> results;
  if (fresh.empty()) {
    VSC_RETURN_IF_ERROR(RaiseFence(epoch));
    return results;
  }
  results.reserve(fresh.size());
  ReplicaState next = state_;
  next.fence_epoch = std::max(next.fence_epoch, epoch);
  VSC_RETURN_IF_ERROR(executor_->Begin());
  for (const Entry& e : fresh) {
    Result<EntryResult> r = executor_->Execute(e);
    if (!r.ok()) {
      executor_->Rollback();
      return r.status();
    }
    r->seq = e.seq;
    next.digest = NextDigest(next.digest, e, *r);
    next.applied_seq = e.seq;
    next.epoch = e.epoch;
    results.push_back(std::move(*r));
  }
  if (Status st = executor_->Commit(next); !st.ok()) {
    executor_->Rollback();
    // The commit may have reached the disk before failing (a crash right after it): trust the
    // stored state, not our guess, so a redelivery is skipped rather than applied twice.
    if (auto stored = executor_->LoadState(); stored.ok()) state_ = *stored;
    return st;
  }
  state_ = next;
  return results;
}

}  // namespace vsc::replication

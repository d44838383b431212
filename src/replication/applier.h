// Applier: applies replicated entries strictly in seq order (DESIGN §7). Consecutive entries are
// batched into one transaction whose commit also stores applied_seq and the digest, so a crash at
// any point neither skips nor repeats an entry. Entries at or below applied_seq are duplicates
// and are skipped (their results are not recomputed); an entry after a gap is refused.
// Fencing (issue 11): entries come in messages sent under the director's epoch; a message from
// an epoch older than the newest seen (state().fence_epoch, stored in the same transaction as
// applied_seq) is refused whole, so a deposed director cannot write here.
//
// Thread: one owner (the replica's writer thread).
#pragma once

#include <memory>
#include <span>
#include <vector>

#include "common/status.h"
#include "replication/executor.h"

namespace vsc::replication {

class Applier {
 public:
  // Loads the stored state. Fails if the executor cannot.
  static Result<std::unique_ptr<Applier>> Create(std::unique_ptr<Executor> executor);

  // Applies the entries in one transaction. Returns the results of the entries newly applied,
  // in order (empty when all were duplicates). FailedPrecondition when the first new entry does
  // not follow applied_seq (a gap: the caller must fetch the missing entries first). On an
  // executor error nothing of the batch is applied and the state is unchanged; except that when
  // Commit itself fails, state() is reloaded from the executor, because the commit may have
  // reached the disk before the failure (then the redelivered entries are skipped as duplicates).
  Result<std::vector<EntryResult>> Apply(std::span<const Entry> entries);
  // The same for a message sent under `epoch`: FailedPrecondition ("... older than epoch N ...")
  // and nothing applied when !Admits(epoch); else fence_epoch becomes at least `epoch`, durably
  // (with the entries, or alone when every entry was a duplicate).
  Result<std::vector<EntryResult>> Apply(std::span<const Entry> entries, uint64_t epoch);
  bool Admits(uint64_t epoch) const { return epoch >= state_.fence_epoch; }
  // Stores fence_epoch = max(fence_epoch, epoch) in a transaction of its own (after a snapshot
  // install brought an older fence).
  Status RaiseFence(uint64_t epoch);

  const ReplicaState& state() const { return state_; }
  Executor& executor() { return *executor_; }

 private:
  explicit Applier(std::unique_ptr<Executor> executor) : executor_(std::move(executor)) {}
  std::unique_ptr<Executor> executor_;
  ReplicaState state_;
};

}  // namespace vsc::replication

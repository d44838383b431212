// Replica: the real server's copy of the replicated database (DESIGN §7) and the one thread that
// writes it. Replicate messages from the agent's io thread are queued here; the replica thread
// takes everything that has arrived (up to max_batch entries) and applies it with one
// Applier::Apply call (one SQLite transaction that also stores applied_seq and the digest), then
// hands a ReplicaAck to `on_ack`. With apply_interval set, transactions start at least that far
// apart (ApplyPacer): what arrives meanwhile waits and joins the next one. SQLite writes block, so
// they never run on the io thread.
//
// The same thread installs snapshots: fetch from the peer into a temp file, verify it, close the
// writer, have every reader closed (`close_readers`, which blocks until the workers did it),
// rename the copy over the database, reopen the writer and the readers.
//
// Threads: Submit, DropPending, InstallSnapshot and status() from any thread; the callbacks run
// on the replica thread. Lifecycle: Open → Start (the thread) → Stop (joins; queued work is
// dropped). A replica whose store failed (an install that could not reopen the database) answers
// every batch with an error ack and keeps its last published state.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "common/clock.h"
#include "common/file_lock.h"
#include "common/status.h"
#include "proto/control.pb.h"
#include "realserver/apply_pacer.h"
#include "replication/applier.h"
#include "replication/replica_store.h"

namespace vsc::realserver {

// What the agent reports in Register and heartbeats.
struct ReplicaPosition {
  uint64_t epoch = 0;
  uint64_t applied_seq = 0;
  replication::Digest digest{};
  // Logical checksum of the content, computed while applied_seq == 0 (empty otherwise).
  std::string content_checksum;
  bool healthy = true;  // false once the store could not be reopened
  // Fencing (issue 11): the newest director epoch seen, and how many messages (Replicate,
  // InstallSnapshot) from an older epoch were refused since the process started.
  uint64_t fence_epoch = 0;
  uint64_t fenced_refusals = 0;
};

struct SnapshotSource {
  std::string peer_id;
  std::string host;
  uint16_t port = 0;
  std::string reason;
  uint64_t epoch = 0;  // the ordering director's epoch (InstallSnapshot.epoch)
};

struct ReplicaHooks {
  // An ack for the batch submitted under `session`. Runs on the replica thread.
  std::function<void(uint64_t session, proto::ReplicaAck ack)> on_ack;
  // Close every reader of the database file in this process; returns once all are closed.
  std::function<void()> close_readers;
  // Reopen them (after an install, or after a failed one on the old file).
  std::function<void()> reopen_readers;
};

struct ReplicaOptions {
  std::string path;
  replication::ReplicaOptions store;
  size_t max_batch = 4096;  // entries per Apply (one transaction)
  // A transaction starts no sooner than this after the previous one started; what arrives
  // meanwhile joins it (ApplyPacer). 0: every batch at once.
  Duration apply_interval{0};
  const Clock* clock = nullptr;  // for apply_interval; null: the real clock
  std::string snapshot_token;    // bearer token for the peer's GET /v1/snapshot
  Duration snapshot_timeout = std::chrono::seconds(30);  // connect and per-read stall bound
};

class Replica {
 public:
  // Locks the database (FileLock on <path>.vsc-lock: kFailedPrecondition naming the holder's
  // pid when another replica has it), then opens it as a replica (the writer connection) on the
  // calling thread. Fails like OpenSqliteExecutor / Applier::Create. A missing file is created
  // empty: the caller decides whether that is wanted (RealServer's create_db).
  static Result<std::unique_ptr<Replica>> Open(ReplicaOptions options, ReplicaHooks hooks);
  // The same with the lock taken beforehand by Lock(options.path), so that a caller can take it
  // first, bind its sockets, and touch the database only when nothing else can fail.
  static Result<std::unique_ptr<Replica>> Open(ReplicaOptions options, ReplicaHooks hooks,
                                               FileLock lock);
  // The replica's lock on `path` (FileLock on <path>.vsc-lock), refused naming the holder.
  static Result<FileLock> Lock(const std::string& path);
  ~Replica();

  // Starts the thread. It first computes the content checksum when applied_seq is 0 (a full
  // scan, cached in <db>.vsc-checksum keyed by the database and WAL files' identity, size and
  // mtime), then calls `on_ready` (on the replica thread) so the agent can register.
  void Start(std::function<void()> on_ready);
  void Stop();

  // Queues the entries of one Replicate message received on `session`. An entry this build
  // cannot decode is answered with an error ack; a message from an epoch older than the newest
  // seen is refused whole, with an ack whose fence_epoch names the newer epoch.
  void Submit(uint64_t session, proto::Replicate message);
  // Drops queued entries not yet applied (the session they came on is gone).
  void DropPending();
  // Fetches and installs a snapshot; `done` runs on the replica thread with the outcome. Entries
  // queued before it are dropped: they belong to the stream the snapshot replaces. An order
  // from an epoch older than the newest seen is refused (FailedPrecondition); after an install
  // the fence is kept at least where it was (the copy may carry an older one).
  void InstallSnapshot(SnapshotSource source, std::function<void(Status)> done);

  ReplicaPosition position() const;
  uint64_t applied_seq() const { return applied_seq_.load(std::memory_order_acquire); }
  const std::string& path() const { return options_.path; }

 private:
  struct Batch {
    uint64_t session;
    proto::Replicate message;
  };
  struct Install {
    SnapshotSource source;
    std::function<void(Status)> done;
  };
  using Work = std::variant<Batch, Install>;

  Replica(ReplicaOptions options, ReplicaHooks hooks, FileLock lock,
          std::unique_ptr<replication::Applier> applier);
  void Run(std::function<void()> on_ready);
  // Holds the queued batches back while the pacer says so (an install, Stop or a full batch
  // ends the wait). Called with mu_ held, through `lock`.
  void WaitForPace(std::unique_lock<std::mutex>& lock);
  void ApplyBatches(std::vector<Batch>& batches);
  // The ack for entries of a message from `epoch` (refused when older than the fence).
  proto::ReplicaAck ApplyEntries(const std::vector<replication::Entry>& entries, uint64_t epoch,
                                 const std::string& decode_error);
  Status DoInstall(const SnapshotSource& source);
  Status ReopenApplier();
  void Publish();

  ReplicaOptions options_;
  ReplicaHooks hooks_;
  FileLock lock_;  // held for the replica's life, across snapshot installs (a sidecar file)
  std::unique_ptr<replication::Applier> applier_;  // replica thread only (null when broken)
  std::string broken_;                             // replica thread only: why applier_ is null

  const Clock& clock_;
  ApplyPacer pacer_;  // replica thread only

  mutable std::mutex mu_;  // guards queue_, queued_entries_, stopping_, position_
  std::condition_variable cv_;
  std::deque<Work> queue_;
  size_t queued_entries_ = 0;  // entries in the Batch items of queue_
  bool stopping_ = false;
  ReplicaPosition position_;

  std::atomic<uint64_t> applied_seq_{0};
  uint64_t fenced_refusals_ = 0;  // replica thread only; published in position_
  std::thread thread_;
};

}  // namespace vsc::realserver

// Replicator: the director's side of replicated databases (DESIGN §7, seed 000 §3.3, seed 001).
// It owns the schema mirror, the sequencer, the durable log, the commit tracker and one stream
// per replica, and decides how a returning replica catches up.
//
// - Writes (Submit) are checked on the schema mirror, then queued; every write accepted in one
//   event-loop turn is sequenced and appended to the log in one Append (group commit). A write
//   is refused before sequencing when it is invalid, read-only, over a size limit, when the
//   update queue is full ("overloaded: update queue full (N)") or when no replica is in sync
//   ("unavailable: ..."): a refused write was applied nowhere.
// - Each replica that is not DOWN and not waiting for a snapshot gets the entries it lacks in
//   Replicate batches, pipelined within a bounded window (replica_window.h); a full window makes
//   it BUSY for reads (no heartbeat involved: the director sees its own window).
// - Acks feed the CommitTracker; each writer gets its WriteResponse when the commit policy is met.
//   The director follows every in-sync replica's digest chain from its outcomes (one SHA-256 per
//   entry, shared by every replica that agrees), records the agreed digests in the log, and marks
//   a replica whose outcome, checksum or digest disagrees DIVERGED: it is told to copy a snapshot
//   from a healthy peer (InstallSnapshot) and comes back through registration.
// - Verify: a sequenced checksum marker; each replica's checksum at that seq is collected.
// - Under an etcd sequencer lease (require_lease, issue 11; replicator_lease.cc) it sequences,
//   verifies, streams and orders snapshots only while the latest LeaseView (SetLease) is held
//   and unexpired by the control thread's own clock, under the lease's epoch (adopted into the
//   log); otherwise writers are refused with the lease's reason ("no quorum for the sequencer
//   lease (...)", "another director holds the sequencer lease (...)"). Every Replicate and
//   InstallSnapshot carries the epoch; a replica that has seen a newer one refuses it, and the
//   ack that says so (fence_epoch) stops this director sequencing until it holds a newer lease.
// - With an InSyncStore (SetInSyncStore: under a lease, commit policy `all`;
//   replicator_in_sync.cc) it keeps its in-sync set in etcd (in_sync_record.h): an answer is
//   released only while etcd's set is within the replicas in sync now, and a promotion resumes
//   only once a replica of the last recorded set has registered.
//
// Thread: the control thread (DESIGN §4); every method, callback and link call runs there.
// Lifetime: created by the Director before the control thread runs; Stop() on the control thread
// answers every waiting writer and stops the timer.
#pragma once

#include <asio.hpp>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/counter.h"
#include "common/status.h"
#include "director/catch_up.h"
#include "director/control_plane.h"
#include "director/digest_follower.h"
#include "director/in_sync_record.h"
#include "director/read_queue.h"
#include "director/replica_window.h"
#include "director/sequencer_lease.h"
#include "director/stream_entry.h"
#include "director/verify_tracker.h"
#include "proto/control.pb.h"
#include "replication/commit_tracker.h"
#include "replication/idempotency.h"
#include "replication/log.h"
#include "replication/mirror.h"
#include "replication/sequencer.h"

namespace vsc::director {

// WriteResponse.code values for answers that are not an SQLite result code. Refusals
// (kRefused..kUnavailable) applied nothing anywhere.
inline constexpr int kWriteRefused = -1;      // invalid, read-only or oversized statement
inline constexpr int kWriteOverloaded = -2;   // update queue full
inline constexpr int kWriteUnavailable = -3;  // no replica in sync, or replication is off
inline constexpr int kWriteLogFailed = -4;    // the log append failed: not sequenced
inline constexpr int kWriteUnknown = -5;      // the director stopped after sequencing: the
                                              // write is in the log and will be replayed

// Limits on what a writer may send (DESIGN §9 "limits on every size").
inline constexpr size_t kMaxBatchStatements = 1000;
inline constexpr size_t kMaxSqlBytes = 64 * 1024;
inline constexpr size_t kMaxParams = 999;
// SQL and parameters of one write request (e.g. a blob parameter of up to ~4 MiB). One entry of
// this size must fit one Replicate envelope (replicator.cc checks it at compile time).
inline constexpr size_t kMaxWritePayload = size_t{4} << 20;

struct ReplicatorOptions {
  std::string log_file = "director-log.db";
  std::string schema_db;  // bootstrap database (schema and content at seq 0); needed on a new log
  replication::CommitPolicy policy = replication::CommitPolicy::kAll;
  WindowLimits window;
  size_t update_queue = 10000;  // writes waiting to be sequenced or decided
  // SQL and parameter bytes of those writes: a byte bound beside the count (10,000 writes of
  // kMaxWritePayload would be 40 GiB). At least kMaxWritePayload.
  uint64_t update_queue_bytes = uint64_t{256} << 20;
  replication::LogOptions log;
  // Sequence only under a held etcd lease (SetLease); the log's epoch is not bumped at Open.
  bool require_lease = false;
  // Under a lease, how long a director that has just taken it waits for replicas to register
  // before it chooses the log head from their positions (promotion; replicator_promotion.cc).
  Duration promotion_wait = std::chrono::milliseconds(1000);
  // How many seqs the replicas remember a write's idempotency key (replicator_keys.cc).
  uint64_t idempotency_window = replication::kDefaultIdempotencyWindow;
};

// Where a replica stands in the replication stream (separate from its membership state).
enum class ReplicationState {
  kCatchingUp,     // replaying the log up to the head; no reads, not counted for commits
  kInSync,         // at the head; counted for commits; may serve reads
  kNeedsSnapshot,  // must copy a snapshot (gap trimmed, content differs, ahead of the log)
  kDiverged,       // disagreed with its peers; must copy a snapshot
  kDown,           // no control session
  kFenced,         // refused our stream: it follows a newer director's epoch (issue 11)
  kAwaitingHead,   // registered while this director promotes: placed once the head is chosen
};
std::string_view ReplicationStateName(ReplicationState state);

// The replicator's handle on a replica's control session: Send queues a message for the
// session's writer (never blocks). Implemented by the ControlServer.
class ReplicaLink {
 public:
  virtual ~ReplicaLink() = default;
  virtual void Send(const proto::Message& message) = 0;
  // The same for a message already serialized (the bytes of a proto::Message): the replicator
  // builds each Replicate from its entries' cached encodings (stream_entry.h).
  virtual void SendEncoded(std::string_view message) = 0;
};

struct ReplicaInfo {
  std::string id;
  ReplicationState state = ReplicationState::kDown;
  std::string reason;  // why it is in that state
  uint64_t applied_seq = 0;
  uint64_t lag = 0;    // last_seq - applied_seq
  std::string digest;  // hex, at applied_seq
  bool busy = false;   // window full
  size_t window_entries = 0;
  uint64_t window_bytes = 0;
  double window_fill = 0;
  std::string snapshot_peer;  // the peer it was told to copy from, if any
  uint64_t acks = 0;
  uint64_t entries_sent = 0;
};

struct ReplicatorCounters {
  Counter writes_accepted;
  Counter writes_committed;  // answered ok
  Counter writes_failed;     // sequenced, failed identically on the replicas (rolled back)
  Counter writes_refused;    // invalid statements
  Counter writes_overloaded;
  Counter writes_unavailable;
  Counter entries_sequenced;
  Counter group_commits;  // log appends
  Counter replicate_messages;
  Counter acks;
  Counter divergences;
  Counter snapshots_ordered;
  Counter busy_events;  // a replica's window became full
  Counter fenced_acks;  // a replica refused our stream: it has seen a newer epoch
};

struct ReplicationStatus {
  bool enabled = false;
  uint64_t epoch = 0;
  uint64_t first_seq = 0;
  uint64_t last_seq = 0;
  uint64_t committed_seq = 0;  // last seq decided
  std::string policy;
  size_t update_queue = 0;  // writes waiting to be sequenced or decided
  size_t update_queue_capacity = 0;
  uint64_t update_queue_bytes = 0;  // their SQL and parameters
  uint64_t update_queue_bytes_capacity = 0;
  size_t pending_decisions = 0;
  std::vector<ReplicaInfo> replicas;
  // The sequencer lease (issue 11): required when etcd_endpoints is set; why writes are refused.
  bool lease_required = false;
  bool sequencing = true;  // writes are sequenced now
  std::string not_sequencing_reason;
  uint64_t fenced_epoch = 0;  // the newest epoch a replica reported above ours
  bool promoting = false;     // learning where the replicas stand before sequencing
  std::string promotion;      // how the last promotion chose the head
  // The in-sync record (SetInSyncStore): kept at all; the set etcd holds as far as this director
  // knows, and the epoch that wrote it; answers decided but held until etcd has a set within the
  // replicas in sync now.
  bool in_sync_recorded_required = false;
  std::vector<std::string> in_sync_recorded;
  uint64_t in_sync_recorded_epoch = 0;
  size_t answers_held = 0;
  std::string in_sync_error;  // the last failed read or write of the record
};

// How a registering server takes part in replication.
struct Admission {
  bool replica = false;  // offers "sql": it holds a copy of the database
  CatchUpPlan plan;
  // Registration.needs_catch_up: behind the head, or waiting for a snapshot.
  bool needs_catch_up() const {
    return replica && (plan.action == CatchUpPlan::Action::kSnapshot || plan.needs_catch_up);
  }
};

class Replicator {
 public:
  using WriteDone = std::function<void(const proto::WriteResponse&)>;
  using Listener = std::function<void()>;

  // Opens (or creates, recording the bootstrap from schema_db) the log, loads the mirror's
  // schema, resumes the sequencer under the log's new epoch. Errors name the file and the fix.
  static Result<std::unique_ptr<Replicator>> Open(asio::io_context& io, ControlPlane& plane,
                                                  const Clock& clock, ReplicatorOptions options);
  ~Replicator();

  // `membership_changed`: after the replicator changed membership (CatchUpDone); `progress`:
  // after replicas advanced or changed eligibility (the read router retries held reads).
  void SetListeners(Listener membership_changed, Listener progress);
  void Start();  // arms the periodic timer
  void Stop();

  // Registration, in this order on the control session: Admit (decides), the ControlPlane
  // registers with admission.needs_catch_up(), the RegisterAck is queued, then Attach (queues
  // InstallSnapshot or starts the stream). Detach when the session ends.
  Admission Admit(const proto::Register& reg) const;
  void Attach(const proto::Register& reg, const Admission& admission,
              std::shared_ptr<ReplicaLink> link);
  void Detach(const std::string& id, const ReplicaLink* link);
  void OnAck(const std::string& id, const proto::ReplicaAck& ack);

  // A writer's request; `done` is called exactly once (at once for refusals).
  void Submit(const proto::WriteRequest& request, WriteDone done);
  // The sequencer lease as the LeaseKeeper last saw it (require_lease only). A held view with a
  // new epoch is adopted (log and sequencer) and the streams resume.
  void SetLease(const LeaseView& view);
  // The director that holds the sequencer lease, when it is another one (LeaseView.holder):
  // this one is then a standby, and turns real servers away to the active director
  // (REFUSAL_STANDBY). nullopt when this director sequences, claims or needs no lease.
  std::optional<std::string> StandbyFor() const;
  // Sequences a checksum marker; its seq names the verification. Unavailable with no replica.
  Result<uint64_t> StartVerify();
  std::optional<VerifyReport> Verify(uint64_t seq) const;
  // The in-sync record's store (require_lease and policy `all` only; otherwise ignored). The
  // store outlives the replicator; its answers come back through the two calls below.
  void SetInSyncStore(InSyncStore* store);
  void OnInSyncRead(uint64_t epoch, Result<std::optional<InSyncRecord>> record);
  void OnInSyncWritten(const InSyncRecord& record, const Status& status);

  // Replicas that can take reads now (load left 0 except reported in-flight work).
  std::vector<ReadCandidate> ReadCandidates() const;
  uint64_t last_seq() const { return sequencer_->last_seq(); }
  uint64_t committed_seq() const { return committed_seq_; }
  ReplicationStatus GetStatus() const;
  const ReplicatorCounters& counters() const { return counters_; }

 private:
  using EntryPtr = StreamEntryPtr;
  struct Replica {
    explicit Replica(WindowLimits limits) : window(limits) {}
    std::string id;
    std::shared_ptr<ReplicaLink> link;
    ReplicationState state = ReplicationState::kDown;
    std::string reason;
    uint64_t acked_seq = 0;
    replication::Digest digest{};  // as reported at acked_seq
    replication::Digest chain{};   // followed from its outcomes (in sync only)
    uint64_t chain_seq = 0;        // the seq `chain` is the digest at
    uint64_t next_seq = 1;
    uint64_t tracked_from = UINT64_MAX;  // first seq whose commit it takes part in
    ReplicaWindow window;
    std::deque<EntryPtr> in_flight;  // sent, not acked, in seq order
    std::string http_host;
    uint16_t http_port = 0;
    net::SockAddr sql;
    net::SockAddr sql_tcp;  // port 0 when the replica offers no TCP read path
    bool has_sql = false;
    bool snapshot_sent = false;
    std::string snapshot_peer;
    // The peer of an order that did not bring it back (it registered again still needing a
    // snapshot: the copy failed); the next order prefers any other healthy peer.
    std::string failed_snapshot_peer;
    uint64_t acks = 0;
    uint64_t entries_sent = 0;
    // From its Register, for a promotion: its schema, and its content checksum (at seq 0).
    std::vector<std::string> schema;
    std::string content_checksum;
  };
  struct Accepted {
    std::vector<replication::Statement> statements;
    replication::Entry::Kind kind = replication::Entry::Kind::kWrite;
    std::vector<size_t> ddl;  // indexes of DDL statements (applied to the mirror once sequenced)
    uint64_t request_id = 0;
    WriteDone done;      // empty for checksum markers
    uint64_t bytes = 0;  // SQL and parameters, counted in queued_bytes_
    std::string key;     // the writer's idempotency key, "" none
  };
  Replicator(asio::io_context& io, ControlPlane& plane, const Clock& clock,
             ReplicatorOptions options);
  void Refuse(const WriteDone& done, uint64_t request_id, int code, const std::string& error);
  // Idempotency keys (replicator_keys.cc). Whether Submit is done with `request` because of its
  // key: refused (a bad key) or joined to the waiting write of the same key, which answers it.
  bool HandledByKey(const proto::WriteRequest& request, WriteDone& done);
  // Moves an accepted write into waiting_ under `seq`, remembering its key.
  void Wait(uint64_t seq, Accepted& accepted);
  // Why this director may not sequence now (require_lease), or nullopt.
  std::optional<std::string> NotSequencing() const;
  // A replica refused our stream: it follows `epoch`, newer than ours.
  void OnFenced(Replica& r, uint64_t epoch);
  // Promotion (replicator_promotion.cc): a new lease's epoch was adopted; every replica is held
  // until the head is chosen, promotion_wait later and with at least one replica registered.
  void StartPromotion();
  void MaybeFinishPromotion();
  void FinishPromotion();
  // Answers every writer still waiting for a decision with ok = false and `outcome(seq)`'s code
  // and error, and forgets them.
  void FailWaiting(const std::function<std::pair<int, std::string>(uint64_t seq)>& outcome);
  // Sequences on after `seq` (its last timestamp `ts`) with nothing recent in memory: at Open and
  // when a promotion rebases the log.
  void ResumeAfter(uint64_t epoch, uint64_t seq, int64_t ts);
  // Registrations are held (kAwaitingHead) while a director under a lease does not sequence.
  bool HoldsRegistrations() const { return options_.require_lease && NotSequencing().has_value(); }
  // Places every held replica against the log, once this director sequences.
  void PlaceHeldReplicas();
  // Where the replica stands against the log; the plan DecideCatchUp makes of it.
  CatchUpPlan PlanFor(const ReplicaPosition& pos) const;
  // Streams, catches up or orders a snapshot for `r` as `plan` says.
  void ApplyPlan(Replica& r, const CatchUpPlan& plan, const std::string& ordered_from);
  void Enqueue(Accepted accepted);
  void Flush();
  std::set<std::string> Participants() const;
  void Pump(Replica& r);
  void PumpAll();
  // Entries from `from`, bounded; NotFound when trimmed from the log.
  Result<std::vector<EntryPtr>> EntriesFrom(uint64_t from, size_t max_entries, uint64_t max_bytes);
  void Decide(std::vector<replication::Decision> decisions);
  // The replica must copy a snapshot; `diverged` marks why. Forgets it for pending commits.
  void OrderSnapshot(Replica& r, ReplicationState state, const std::string& reason);
  void SendSnapshotOrders();
  // The in-sync peer furthest ahead, other than `except`; `avoid` only when no other is healthy.
  const Replica* HealthyPeer(const std::string& except, const std::string& avoid) const;
  std::optional<replication::Digest> AgreedAt(uint64_t seq) const;
  // The in-sync record (replicator_in_sync.cc). Whether it is kept; the record to write when the
  // in-sync set changed; answers held until etcd's set is covered, released when it is, or
  // answered as unknown when this director stops sequencing under their epoch.
  bool KeepsInSyncRecord() const { return in_sync_store_ != nullptr; }
  void RecordInSync();
  void ReleaseHeldIfCovered();
  void FailHeld();
  // Promotion: the last record has been read and one of its replicas registered (asks etcd
  // again while it waits, so that an operator's deletion of the key is seen).
  bool PromotionMayUseRecord(const ReplicaSet& registered);
  // Every member of the last record (as read for this promotion) has registered.
  bool WholeRecordRegistered(const ReplicaSet& registered) const;
  void Tick();
  void ArmTimer();
  void Notify(const Listener& l) const {
    if (l) l();
  }

  asio::io_context& io_;
  ControlPlane& plane_;
  const Clock& clock_;
  ReplicatorOptions options_;
  ReplicatorCounters counters_;
  Listener membership_changed_;
  Listener progress_;
  asio::steady_timer timer_;
  bool stopped_ = false;

  // Sequencing: the mirror checks, the sequencer numbers, the log keeps.
  std::unique_ptr<replication::SchemaMirror> mirror_;
  std::unique_ptr<replication::ReplicationLog> log_;
  std::unique_ptr<replication::Sequencer> sequencer_;
  replication::CommitTracker tracker_;
  std::vector<Accepted> batch_;  // accepted this turn, sequenced by Flush
  bool flush_posted_ = false;
  struct Waiting {
    uint64_t request_id = 0;
    WriteDone done;
    uint64_t bytes = 0;
    std::string key;  // idempotency key, "" none
    // Retries of the same key that arrived while this write waited: they get its answer.
    std::vector<std::pair<uint64_t, WriteDone>> joined;
    // Decided, not yet released: etcd's in-sync set is not within the replicas in sync now.
    std::optional<proto::WriteResponse> held;
  };
  std::map<uint64_t, Waiting> waiting_;           // sequenced, not decided
  std::map<std::string, uint64_t> waiting_keys_;  // idempotency key -> its seq in waiting_
  // Answers the write waiting at `seq` and every retry joined to it, and forgets its key and
  // bytes (the caller erases it). An unknown outcome of a keyed write says to retry with the key.
  void AnswerWaiting(uint64_t seq, Waiting& w, proto::WriteResponse resp);
  // Counts a decided write's answer as committed or failed.
  void CountAnswer(const proto::WriteResponse& resp);
  // Answers a held write: applied by the replicas in sync, but its answer relied on a set etcd
  // does not hold; the caller erased it.
  void AnswerHeldUnknown(uint64_t seq, Waiting& w);
  // Removes every held write from waiting_, in seq order.
  std::vector<std::pair<uint64_t, Waiting>> TakeHeld();
  uint64_t queued_bytes_ = 0;  // `bytes` of every write in batch_ and waiting_
  uint64_t committed_seq_ = 0;

  // Recent entries, for streaming without reading the log: seqs recent_first_..last_seq.
  std::deque<EntryPtr> recent_;
  std::string replicate_buf_;  // Pump's encoding of one Replicate, reused
  uint64_t recent_first_ = 1;
  uint64_t recent_bytes_ = 0;

  // Digest chain bookkeeping.
  DigestFollower digests_;
  uint64_t agreed_persisted_ = 0;  // last seq whose agreed digest is in the log
  TimePoint last_trim_{};

  std::map<std::string, Replica> replicas_;
  VerifyTracker verifies_;

  // The sequencer lease (require_lease).
  LeaseView lease_;
  std::string adopt_error_;    // the lease's epoch could not be adopted
  uint64_t fenced_epoch_ = 0;  // newest epoch a replica reported above ours
  bool promoting_ = false;
  TimePoint promotion_until_{};
  std::string promotion_outcome_;

  // The in-sync record (SetInSyncStore).
  InSyncStore* in_sync_store_ = nullptr;
  InSyncLedger in_sync_;
  size_t held_ = 0;  // entries of waiting_ with `held`
  enum class RecordRead { kNone, kReading, kRead };
  RecordRead promotion_read_ = RecordRead::kNone;
  std::optional<InSyncRecord> promotion_record_;  // as read, for the promotion under way
  TimePoint promotion_read_at_{};
  std::string in_sync_error_;  // the last failed read or write
};

}  // namespace vsc::director

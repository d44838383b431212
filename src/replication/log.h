// ReplicationLog: the director's durable log of sequenced entries, in its own SQLite file (WAL,
// synchronous=NORMAL by default, FULL available). Append() of a span is one transaction: the
// caller batches concurrent writes into one Append (group commit). A retention window (entries
// and bytes) bounds it; entries older than the window are trimmed and a replica that needs them
// must copy a snapshot instead. The file also keeps the epoch (incremented at every Open, so a
// restarted director sequences under a new epoch; or, under an etcd sequencer lease, not
// bumped but set by AdoptEpoch to the lease's epoch, which is unique cluster-wide) and every DDL
// statement ever sequenced (never trimmed: the schema mirror is rebuilt from it).
//
// Thread: one owner (the director's log thread). Reads from another thread need their own
// ReplicationLog::OpenReader.
//
// File layout (tables): entries(seq PK, epoch, ts, kind, bytes, payload BLOB: the statement
// encoding of docs/protocol.md "Digest chain", idem_key, idem_window: the entry's idempotency
// key, '' none, and window; Open adds them to a log file from before them), meta(key, value: epoch,
// last_seq, last_ts, bootstrap_checksum), schema(id, seq, sql: seq 0 = bootstrap), agreed(seq PK,
// digest). A statement is recorded in `schema` when its first keyword is CREATE, DROP or ALTER.
// Retention counts entries and encoded payload bytes, and never trims the newest entry.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "common/status.h"
#include "replication/entry.h"

namespace vsc::replication {

struct LogOptions {
  uint64_t retain_entries = 1'000'000;
  uint64_t retain_bytes = 256ull << 20;
  bool synchronous_full = false;
  // Open increments the stored epoch. Off under an etcd lease: the epoch then comes from etcd
  // (AdoptEpoch), and a local increment could reach another director's etcd epoch.
  bool bump_epoch = true;
};

class ReplicationLog {
 public:
  // Opens or creates the log, bumps and persists the epoch.
  static Result<std::unique_ptr<ReplicationLog>> Open(const std::string& path,
                                                      const LogOptions& options);
  // A second connection for reading from another thread: Read, Schema, BootstrapChecksum,
  // AgreedDigest and the accessors (which re-read the file); the writing calls fail with
  // FailedPrecondition. Does not bump the epoch. NotFound when the log does not exist.
  static Result<std::unique_ptr<ReplicationLog>> OpenReader(const std::string& path);
  ~ReplicationLog();

  uint64_t epoch() const;
  // Sequences from now on under `epoch`, durably. FailedPrecondition unless it is above the
  // current epoch (epochs never go backwards for the replicas).
  Status AdoptEpoch(uint64_t epoch);
  uint64_t first_seq() const;  // oldest entry still held (last_seq()+1 when empty)
  uint64_t last_seq() const;   // 0 when nothing was ever sequenced
  int64_t last_ts_micros() const;

  // Appends entries with consecutive seqs following last_seq(); durable when it returns.
  Status Append(std::span<const Entry> entries);
  // Entries from `from_seq` on, at most `max_entries` and about `max_bytes` (at least one).
  // NotFound when from_seq < first_seq() (trimmed: copy a snapshot).
  Result<std::vector<Entry>> Read(uint64_t from_seq, size_t max_entries, size_t max_bytes) const;
  // Every DDL statement sequenced so far, in order, after the bootstrap schema.
  Result<std::vector<std::string>> Schema() const;
  // Records what seq 0 is: the schema and the logical content checksum (replica_store.h
  // Checksum) of the database every replica starts from. Only on a new log; FailedPrecondition
  // when one is recorded already.
  Status SetBootstrap(const std::vector<std::string>& ddl, const std::string& checksum);
  // The recorded bootstrap checksum ("" when none was recorded).
  std::string BootstrapChecksum() const;
  // The digest the replicas agreed on after `seq` (recorded when the entry was decided), so a
  // returning replica's digest can be checked; NotFound when not recorded or trimmed.
  Status SetAgreedDigest(uint64_t seq, const Digest& digest);
  Result<Digest> AgreedDigest(uint64_t seq) const;
  // Restarts the log after `seq` (promotion, issue 11: the replicas' head, which this log does
  // not hold): in one transaction every entry and agreed digest goes, `digest` becomes the
  // agreed digest at `seq`, and `ddl` (the schema of a replica at `seq`) the whole schema. The
  // epoch, the last timestamp and the bootstrap stay. Then first_seq() is seq + 1.
  Status Rebase(uint64_t seq, const Digest& digest, const std::vector<std::string>& ddl);
  // Applies the retention window. Returns entries trimmed.
  Result<uint64_t> Trim();

 private:
  ReplicationLog() = default;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace vsc::replication

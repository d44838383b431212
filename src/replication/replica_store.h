// SqliteExecutor and replica helpers: the production Executor over a replica's SQLite file
// (DESIGN §7 "Determinism by construction").
// - One writer connection. The replica's state lives in table `_vsc_replica(id INTEGER PRIMARY KEY
//   CHECK (id = 0), epoch, applied_seq, digest BLOB)`, updated in the same transaction as the
//   entries.
// - random() and randomblob(N) are replaced on the writer connection by functions seeded from
//   (epoch, seq) and the call order within the entry, so every replica computes the same values.
// - The connection uses a VFS that wraps the default one and whose clock (xCurrentTimeInt64,
//   xCurrentTime) returns the timestamp of the entry being applied, so 'now',
//   CURRENT_TIMESTAMP, CURRENT_DATE and column defaults agree on every replica.
// - A kChecksum entry computes the logical content hash (Checksum below) at seq - 1.
// - Every entry runs under a SAVEPOINT: a failing entry is rolled back alone and its SQLite
//   primary code is its result. Failures that are the same on every replica (constraint, SQL
//   error, type mismatch, too big, not authorized...) are results; failures of this replica
//   (I/O, disk full, out of memory, corrupt, busy/locked, read-only, interrupted) are executor
//   errors that abandon the batch. A statement that ends the whole transaction (RAISE(ROLLBACK),
//   ON CONFLICT ROLLBACK) is handled by re-running the batch's earlier entries in a new
//   transaction, so that entry still fails alone, whatever the batching.
// - A keyed entry (Entry.idempotency_key, issue 11) looks its key up in `_vsc_idempotency`
//   (idempotency_table.h) in the same transaction: a key applied within the window applies
//   nothing and reports the original outcome (duplicate_of); otherwise the key is recorded.
// - An authorizer on the writer connection refuses (SQLITE_AUTH result, the same everywhere)
//   transaction control, ATTACH/DETACH, PRAGMA, temporary objects and writes to _vsc_* tables,
//   in case such a statement reaches a replica without passing the director's mirror.
// Thread: the executor belongs to the replica's writer thread. Checksum and Snapshot open their
// own connections and may run on any thread, concurrently with the writer (WAL snapshots).
#pragma once

#include <memory>
#include <string>

#include "common/status.h"
#include "replication/executor.h"

struct sqlite3;

namespace vsc::replication {

struct ReplicaOptions {
  std::string synchronous = "NORMAL";  // WAL with NORMAL: durable at checkpoint; FULL: per commit
};

Result<std::unique_ptr<Executor>> OpenSqliteExecutor(const std::string& path,
                                                     const ReplicaOptions& options);

// Logical content hash of a database: every user table (not sqlite_*, not _vsc_*), in name
// order, every row ordered by rowid / primary key, every column with its storage class;
// SHA-256, hex. Independent of page layout, so a snapshot copy and a replayed replica agree.
// The exact layout is in docs/protocol.md "Digest chain" (Content checksum).
Result<std::string> Checksum(const std::string& path);
// The same over an open connection (in its current transaction, if any).
Result<std::string> ChecksumConnection(sqlite3* db);
// The replica state stored in a database file (zero state when it has none yet), without
// opening an executor: for registration and for checking an installed snapshot.
Result<ReplicaState> ReadReplicaState(const std::string& path);

// A consistent copy of a replica database (SQLite online backup API) into `out_path`; returns the
// replica state the copy holds. The copy can be installed on another replica as is.
Result<ReplicaState> Snapshot(const std::string& path, const std::string& out_path);

}  // namespace vsc::replication

// The unit of replication (DESIGN §7): a sequenced write — one statement with bound parameters,
// or an explicit batch applied atomically — or a checksum marker for `vsc adm verify`.
// Plain values; copyable; no I/O.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace vsc::replication {

// A bound parameter (SQLite's five storage classes). Text and blob bytes live in `bytes`.
struct Value {
  enum class Kind : uint8_t { kNull = 0, kInt = 1, kReal = 2, kText = 3, kBlob = 4 };
  Kind kind = Kind::kNull;
  int64_t i = 0;
  double r = 0;
  std::string bytes;

  static Value Null() { return {}; }
  static Value Int(int64_t v) { Value x; x.kind = Kind::kInt; x.i = v; return x; }
  static Value Real(double v) { Value x; x.kind = Kind::kReal; x.r = v; return x; }
  static Value Text(std::string v) { Value x; x.kind = Kind::kText; x.bytes = std::move(v); return x; }
  static Value Blob(std::string v) { Value x; x.kind = Kind::kBlob; x.bytes = std::move(v); return x; }
  bool operator==(const Value&) const = default;
};

struct Statement {
  std::string sql;
  std::vector<Value> params;  // bound to ?1..?N in order
  bool operator==(const Statement&) const = default;
};

struct Entry {
  enum class Kind : uint8_t { kWrite = 0, kChecksum = 1 };
  uint64_t epoch = 0;    // director incarnation that sequenced it
  uint64_t seq = 0;      // 1, 2, 3... with no gaps, across director restarts
  int64_t ts_micros = 0; // wall clock at sequencing: what 'now' means when it is applied
  Kind kind = Kind::kWrite;
  std::vector<Statement> statements;  // one, or an atomic batch; empty for kChecksum
  // The writer's idempotency key ("" none; idempotency.h) and how many seqs replicas remember
  // it (idempotency_table.h).
  std::string idempotency_key;
  uint64_t idempotency_window = 0;
  bool operator==(const Entry&) const = default;
};

// What applying one entry did on one replica. Deterministic: every replica that applies the
// same entries in the same order from the same state gets the same results.
// What one statement of an applied write did (for clients; not part of the digest).
struct StatementResult {
  int64_t rows_affected = 0;
  int64_t last_insert_id = 0;  // 0 when the statement inserted no row
  bool operator==(const StatementResult&) const = default;
};

struct EntryResult {
  uint64_t seq = 0;
  int code = 0;               // 0 = applied; else the SQLite primary result code (entry rolled back)
  int64_t rows_changed = 0;   // sum over the entry's statements
  std::string error;          // SQLite's message when code != 0
  std::string checksum;       // kChecksum entries: hex logical hash of the content at seq - 1
  std::vector<StatementResult> statements;  // one per statement when code == 0
  uint32_t failed_statement = 0;            // 1-based index of the failing statement
  // Non-zero: the entry's idempotency key was applied at this seq; nothing was applied now and
  // the fields above are that application's outcome.
  uint64_t duplicate_of = 0;
  bool operator==(const EntryResult&) const = default;
};

using Digest = std::array<uint8_t, 32>;

// Size of an entry's payload for limits and retention (sql + params), not the wire size.
size_t PayloadBytes(const Entry& entry);

}  // namespace vsc::replication

// SchemaMirror: the director's schema-only, in-memory SQLite database (DESIGN §7). Every statement
// arriving on the write port is prepared here before it is sequenced, so a bad statement is
// refused with a clear message and never reaches the log: syntax errors, more than one statement,
// a read-only statement on the write port, unknown tables or columns, a parameter count that does
// not match, and functions whose result would differ between replicas (last_insert_rowid(),
// changes(), total_changes(), sqlite_source_id() inside writes...), detected with the authorizer.
// random(), randomblob(), 'now' and CURRENT_TIMESTAMP are allowed: replicas evaluate them
// deterministically. DDL is applied to the mirror once it is sequenced, so later statements see
// the new schema.
//
// Refused on the write port, each with its own message (prefix "statement refused: "):
// - SQLite's prepare error (syntax, unknown table or column), an empty request, more than one
//   statement, a parameter count that differs from the values bound;
// - transaction control (BEGIN, COMMIT, END, ROLLBACK, SAVEPOINT, RELEASE): the replicas run every
//   entry inside their own transaction; send a batch instead, which is applied atomically;
// - ATTACH/DETACH, PRAGMA, VACUUM (VACUUM renumbers rowids of tables without an INTEGER PRIMARY
//   KEY), temporary and virtual tables/views/indexes/triggers, and any object named _vsc_*;
// - in writes and DDL, functions whose value depends on the connection, the build or the file
//   rather than on the data: last_insert_rowid(), changes(), total_changes() (connection
//   counters), sqlite_version(), sqlite_source_id(), sqlite_compileoption_used(),
//   sqlite_compileoption_get() (replicas may run another SQLite build), sqlite_offset() (file
//   layout, which differs after a snapshot copy or VACUUM), load_extension(); and the date/time
//   modifiers 'localtime' and 'utc' (they depend on the replica's time zone). In DDL the SQL text
//   is also scanned for these names, because column DEFAULTs are not seen by the authorizer
//   until an INSERT runs them on a replica.
// Reads (kRead) are not refused for these: the director refuses a read on the write port itself.
// Not detectable here, documented for writers: rowid assignment becomes random once a table's
// largest rowid is 9223372036854775807 (use AUTOINCREMENT or explicit keys).
//
// Thread: one owner (the director's sequencer thread). Not copyable.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "replication/entry.h"

namespace vsc::replication {

enum class StatementKind { kRead, kWrite, kDdl };

class SchemaMirror {
 public:
  static Result<std::unique_ptr<SchemaMirror>> Create();
  // Loads schema statements (CREATE TABLE/INDEX/VIEW/TRIGGER) as found in sqlite_master.
  Status LoadSchema(const std::vector<std::string>& ddl);
  // The schema of an existing database file (its sqlite_master, without internal tables).
  static Result<std::vector<std::string>> ReadSchema(const std::string& db_path);
  // Classifies and validates one statement. InvalidArgument with a message that says what is
  // wrong and what to do ("statement refused: more than one statement in request; send one
  // statement per request").
  Result<StatementKind> Check(const Statement& statement) const;
  // Checks an atomic batch as a unit: DDL earlier in the batch is visible to later statements
  // (applied inside a savepoint that is rolled back, so the mirror is unchanged). The kinds in
  // order, or the first refusal prefixed with "statement N: ".
  Result<std::vector<StatementKind>> CheckBatch(const std::vector<Statement>& statements);
  // Applies a DDL statement to the mirror (after it is sequenced).
  Status ApplyDdl(const Statement& statement);
  ~SchemaMirror();

 private:
  SchemaMirror() = default;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace vsc::replication

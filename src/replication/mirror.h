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
  // Applies a DDL statement to the mirror (after it is sequenced).
  Status ApplyDdl(const Statement& statement);
  ~SchemaMirror();

 private:
  SchemaMirror() = default;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace vsc::replication

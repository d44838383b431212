// Maps SQLite result codes to vsc::Status, keeping SQLite's own message and the statement.
//
// Internal to vsc_store: the wrapper classes build their errors here so that every message has
// the same shape, "<operation> '<sql>': <sqlite message>".
#pragma once

#include <string_view>

#include "common/status.h"

struct sqlite3;

namespace vsc::store {

// The vsc::Code for an SQLite (extended) result code: busy/locked -> kUnavailable, constraint
// -> kAlreadyExists for UNIQUE/PRIMARY KEY and kFailedPrecondition otherwise, corrupt/not a
// database -> kDataLoss, full/nomem -> kResourceExhausted, I/O and open failures -> kIo,
// read-only -> kFailedPrecondition, misuse -> kInternal, anything else -> kInvalidArgument.
Code CodeForSqlite(int rc);

// "<what> '<sql>': <message>"; the SQL is shortened to its first 200 bytes. `db` may be null
// (then the message is sqlite3_errstr(rc)).
Status SqliteStatus(int rc, sqlite3* db, std::string_view what, std::string_view sql);

}  // namespace vsc::store

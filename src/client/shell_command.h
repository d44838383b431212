// The interactive shell's own commands (`vsc sql` without -e), recognised only at the start of a
// statement (not inside an unfinished one):
//   .tables              the tables and views, one per line
//   .schema [TABLE]      the CREATE statements (of TABLE and its indexes and triggers)
//   .help, help          what the shell takes
//   .quit, .exit, quit, exit   leave (as Ctrl-D does)
// The words without a dot may end with ';' ("quit;"); dot commands end at the end of the line.
// The queries are ordinary reads of sqlite_master, sent like any SELECT; the replica's own
// bookkeeping table (_vsc_replica) is left out. Pure; thread safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "common/status.h"
#include "proto/replication.pb.h"

namespace vsc::client {

struct ShellCommand {
  enum class Kind { kTables, kSchema, kHelp, kQuit };
  Kind kind;
  std::string table;  // .schema TABLE; empty: every table
};

// nullopt: the line is SQL. InvalidArgument: a dot command that does not exist or takes other
// arguments (the message says what to type instead).
Result<std::optional<ShellCommand>> ParseShellCommand(std::string_view line);

// The read behind .tables / .schema.
proto::SqlStatement ShellQuery(const ShellCommand& command);

// The text .help prints.
std::string ShellHelp();

}  // namespace vsc::client

#include "client/shell_command.h"

#include <cctype>
#include <vector>

#include "client/sql_client.h"

namespace vsc::client {
namespace {

std::vector<std::string> Split(std::string_view line) {
  std::vector<std::string> words;
  std::string w;
  for (char c : line) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      if (!w.empty()) words.push_back(std::move(w));
      w.clear();
    } else {
      w += c;
    }
  }
  if (!w.empty()) words.push_back(std::move(w));
  return words;
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Tables and views of the user, not SQLite's (sqlite_%) nor the replica's (_vsc_%).
constexpr const char* kUserObjects =
    "name NOT LIKE 'sqlite\\_%' ESCAPE '\\' AND name NOT LIKE '\\_vsc\\_%' ESCAPE '\\'";

}  // namespace

Result<std::optional<ShellCommand>> ParseShellCommand(std::string_view line) {
  std::vector<std::string> words = Split(line);
  if (words.empty()) return std::optional<ShellCommand>();
  std::string first = Lower(words[0]);
  if (first.front() != '.') {
    if (words.size() != 1) return std::optional<ShellCommand>();
    if (!first.empty() && first.back() == ';') first.pop_back();
    if (first == "help")
      return std::optional<ShellCommand>(ShellCommand{ShellCommand::Kind::kHelp, ""});
    if (first == "quit" || first == "exit") {
      return std::optional<ShellCommand>(ShellCommand{ShellCommand::Kind::kQuit, ""});
    }
    return std::optional<ShellCommand>();
  }
  auto no_args = [&](ShellCommand::Kind kind) -> Result<std::optional<ShellCommand>> {
    if (words.size() > 1) return InvalidArgument(words[0] + " takes no arguments");
    return std::optional<ShellCommand>(ShellCommand{kind, ""});
  };
  if (first == ".tables") return no_args(ShellCommand::Kind::kTables);
  if (first == ".help") return no_args(ShellCommand::Kind::kHelp);
  if (first == ".quit" || first == ".exit") return no_args(ShellCommand::Kind::kQuit);
  if (first == ".schema") {
    if (words.size() > 2) return InvalidArgument(".schema takes at most one table name");
    return std::optional<ShellCommand>(
        ShellCommand{ShellCommand::Kind::kSchema, words.size() == 2 ? words[1] : ""});
  }
  return InvalidArgument("unknown command " + words[0] +
                         "; the shell knows .tables, .schema [TABLE], .help and .quit");
}

proto::SqlStatement ShellQuery(const ShellCommand& command) {
  if (command.kind == ShellCommand::Kind::kTables) {
    return MakeStatement(std::string("SELECT name FROM sqlite_master WHERE type IN ('table', "
                                     "'view') AND ") +
                         kUserObjects + " ORDER BY name");
  }
  std::string sql =
      std::string("SELECT sql FROM sqlite_master WHERE sql IS NOT NULL AND ") + kUserObjects;
  if (command.table.empty()) {
    return MakeStatement(sql + " ORDER BY tbl_name, type <> 'table', name");
  }
  return MakeStatement(sql + " AND lower(tbl_name) = lower(?1) ORDER BY type <> 'table', name",
                       {SqlText(command.table)});
}

std::string ShellHelp() {
  return "Statements end with ';' and may span lines. SELECT, VALUES, EXPLAIN, WITH ... SELECT\n"
         "and PRAGMA without '=' are read from one replica; every other statement is a write,\n"
         "sequenced by the director and applied on every replica. BEGIN ... COMMIT sends the\n"
         "statements between as one atomic batch; ROLLBACK drops it.\n"
         "  .tables            list the tables and views\n"
         "  .schema [TABLE]    show the CREATE statements (of TABLE)\n"
         "  .help, help        this text\n"
         "  .quit, quit, exit  leave (or Ctrl-D); Ctrl-C clears the line being typed\n";
}

}  // namespace vsc::client

#include "client/shell_command.h"

#include <gtest/gtest.h>

namespace vsc::client {
namespace {

using Kind = ShellCommand::Kind;

std::optional<ShellCommand> Command(std::string_view line) {
  auto c = ParseShellCommand(line);
  EXPECT_TRUE(c.ok()) << line << ": " << c.status().ToString();
  return c.ok() ? *c : std::nullopt;
}

std::string CommandRefused(std::string_view line) {
  auto c = ParseShellCommand(line);
  EXPECT_FALSE(c.ok()) << line;
  return c.ok() ? "" : c.status().message();
}

TEST(ShellCommandTest, DotCommandsAndTheirPlainWords) {
  EXPECT_EQ(Command(".tables")->kind, Kind::kTables);
  EXPECT_EQ(Command("  .TABLES  ")->kind, Kind::kTables);
  EXPECT_EQ(Command(".schema")->kind, Kind::kSchema);
  EXPECT_EQ(Command(".schema")->table, "");
  EXPECT_EQ(Command(".schema notes")->table, "notes");
  EXPECT_EQ(Command(".schema Notes")->table, "Notes");
  for (const char* w : {".help", "help", "HELP", "help;"})
    EXPECT_EQ(Command(w)->kind, Kind::kHelp) << w;
  for (const char* w : {".quit", ".exit", "quit", "exit", "Exit", "quit;", "exit;"}) {
    EXPECT_EQ(Command(w)->kind, Kind::kQuit) << w;
  }
}

TEST(ShellCommandTest, SqlIsNotACommand) {
  for (const char* sql : {"", "   ", "SELECT 1;", "quit now", "helpme", "select help;", "exit_code",
                          "INSERT INTO t VALUES('.tables');"}) {
    EXPECT_FALSE(Command(sql).has_value()) << sql;
  }
}

TEST(ShellCommandTest, UnknownOrMisusedDotCommandsSayWhatExists) {
  EXPECT_NE(CommandRefused(".tabels").find("unknown command .tabels; the shell knows .tables"),
            std::string::npos);
  EXPECT_NE(CommandRefused(".").find("unknown command"), std::string::npos);
  EXPECT_NE(CommandRefused(".tables t").find(".tables takes no arguments"), std::string::npos);
  EXPECT_NE(CommandRefused(".quit now").find("takes no arguments"), std::string::npos);
  EXPECT_NE(CommandRefused(".schema a b").find("at most one table"), std::string::npos);
}

TEST(ShellCommandTest, QueriesReadSqliteMasterWithoutInternalTables) {
  const proto::SqlStatement tables = ShellQuery({Kind::kTables, ""});
  EXPECT_EQ(tables.sql().rfind("SELECT name FROM sqlite_master", 0), 0u) << tables.sql();
  EXPECT_NE(tables.sql().find("_vsc"), std::string::npos);
  EXPECT_NE(tables.sql().find("sqlite"), std::string::npos);
  EXPECT_EQ(tables.params_size(), 0);
  const proto::SqlStatement all = ShellQuery({Kind::kSchema, ""});
  EXPECT_EQ(all.params_size(), 0);
  const proto::SqlStatement one = ShellQuery({Kind::kSchema, "notes"});
  ASSERT_EQ(one.params_size(), 1);
  EXPECT_EQ(one.params(0).text(), "notes");  // bound, never spliced into the SQL
  EXPECT_EQ(one.sql().find("notes"), std::string::npos);
  EXPECT_NE(ShellHelp().find(".schema [TABLE]"), std::string::npos);
}

}  // namespace
}  // namespace vsc::client

// vsc sql: the SQL client of the replicated database (DESIGN §7; docs/sql_cli.md). One-shot with
// -e (and --param for the statement's parameters), else a shell reading ';'-terminated
// statements and its own commands (.tables, .schema, .help, .quit) from stdin. What each
// statement does: sql_session.h; how lines are read and Ctrl-C handled: line_reader.h.
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/line_reader.h"
#include "cli/options.h"
#include "cli/secrets.h"
#include "cli/sql_session.h"
#include "client/sql_params.h"
#include "client/sql_text.h"
#include "net/endpoint.h"
#include "replication/idempotency.h"

namespace vsc::cli {
namespace {

// A parameter file's limit: what one write request may carry (director/write_server.h).
constexpr size_t kMaxParamFileBytes = size_t{4} << 20;

struct SqlFlags {
  std::string director = "127.0.0.1";
  std::string key_file;
  bool insecure = false;
  std::string execute;
  std::vector<std::string> params;
  std::string format = "table";
  uint64_t min_seq = 0;
  uint16_t write_port = 0;  // 0: the one in --director, else 7300
  uint16_t http_port = 4001;
  double timeout_ms = 5000;
  std::string idempotency_key;
};

std::vector<std::string> SplitStatements(const std::string& text) {
  client::SqlSplitter splitter;
  splitter.Feed(text);
  std::vector<std::string> statements;
  while (auto s = splitter.Next()) statements.push_back(std::move(*s));
  if (std::string rest = splitter.TakeRest(); !rest.empty()) statements.push_back(rest);
  return statements;
}

int RunOnce(SqlSession& session, const SqlFlags& f, std::vector<proto::SqlValue> params) {
  const std::vector<std::string> statements = SplitStatements(f.execute);
  if (!params.empty() && statements.size() != 1) {
    std::fprintf(stderr,
                 "vsc sql: --param binds the parameters of one statement, and -e holds %zu; "
                 "run one statement per vsc sql, or use BEGIN ... COMMIT in the shell\n",
                 statements.size());
    return 2;
  }
  int failures = 0;
  for (const auto& s : statements) failures += session.Run(s, std::move(params)) ? 0 : 1;
  if (session.in_batch()) {
    std::fprintf(stderr, "error: BEGIN without COMMIT; the batch was not sent\n");
    ++failures;
  }
  return failures == 0 ? 0 : 1;
}

// One line of the shell: a shell command at the start of a statement, else SQL text.
// Returns false when the shell should end.
bool ShellLine(SqlSession& session, client::SqlSplitter& splitter, const std::string& line,
               int& failures) {
  if (!splitter.pending()) {
    auto command = client::ParseShellCommand(line);
    if (!command.ok()) {
      std::fprintf(stderr, "error: %s\n", command.status().message().c_str());
      ++failures;
      return true;
    }
    if (*command) {
      switch ((*command)->kind) {
        case client::ShellCommand::Kind::kQuit:
          return false;
        case client::ShellCommand::Kind::kHelp:
          std::fputs(client::ShellHelp().c_str(), stdout);
          return true;
        default:
          failures += session.RunCommand(**command) ? 0 : 1;
          return true;
      }
    }
  }
  splitter.Feed(line + "\n");
  while (auto s = splitter.Next()) failures += session.Run(*s) ? 0 : 1;
  return true;
}

int RunShell(SqlSession& session, const client::SqlDirector& d) {
  const bool tty = ::isatty(STDIN_FILENO) != 0;
  if (tty) {
    std::printf(
        "vsc sql: director %s; end statements with ';', .help for help, Ctrl-D or .quit to "
        "leave\n",
        net::HostPort(d.host, d.write_port).c_str());
  }
  LineReader reader(STDIN_FILENO);
  client::SqlSplitter splitter;
  int failures = 0;
  std::string line;
  for (;;) {
    if (tty) {
      std::fputs(splitter.pending() ? "   -> " : (session.in_batch() ? "vsc*> " : "vsc> "), stdout);
      std::fflush(stdout);
    }
    const LineReader::Event e = reader.Next(line);
    if (e == LineReader::Event::kEnd) break;
    if (e == LineReader::Event::kInterrupted) {
      splitter.TakeRest();  // Ctrl-C drops the statement being typed, and only that
      std::fputs("\n", stdout);
      continue;
    }
    if (!ShellLine(session, splitter, line, failures)) break;
    std::fflush(stdout);
  }
  if (std::string rest = splitter.TakeRest(); !rest.empty()) {
    failures += session.Run(rest) ? 0 : 1;
  }
  if (tty) std::printf("\n");
  // Piped input is a script: its failures show in the exit code.
  return tty || failures == 0 ? 0 : 1;
}

int RunSql(const SqlFlags& f) {
  auto director = client::ParseSqlDirector(f.director);
  if (!director.ok()) {
    std::fprintf(stderr, "vsc sql: %s\n", director.status().message().c_str());
    return 2;
  }
  if (f.write_port != 0) director->write_port = f.write_port;
  auto format = client::ParseOutputFormat(f.format);
  if (!format.ok()) {
    std::fprintf(stderr, "vsc sql: %s\n", format.status().message().c_str());
    return 2;
  }
  std::vector<proto::SqlValue> params;
  const client::FileReader files = client::DiskFileReader(kMaxParamFileBytes);
  for (const auto& p : f.params) {
    auto v = client::ParseParam(p, files);
    if (!v.ok()) {
      std::fprintf(stderr, "vsc sql: %s\n", v.status().message().c_str());
      return 2;
    }
    params.push_back(std::move(v).value());
  }
  if (!params.empty() && f.execute.empty()) {
    std::fprintf(stderr, "vsc sql: --param needs the statement in -e \"...\"\n");
    return 2;
  }
  if (!f.idempotency_key.empty()) {
    if (Status valid = replication::ValidateIdempotencyKey(f.idempotency_key); !valid.ok()) {
      std::fprintf(stderr, "vsc sql: --idempotency-key: %s\n", valid.message().c_str());
      return 2;
    }
    const size_t requests = SqlSession::WriteRequests(SplitStatements(f.execute));
    if (requests != 1) {
      std::fprintf(stderr,
                   "vsc sql: --idempotency-key names one write request, and -e makes %zu; give "
                   "it one write statement or one BEGIN ... COMMIT; nothing was sent\n",
                   requests);
      return 2;
    }
  }
  auto key = ResolveClusterKey(f.key_file, f.insecure);
  if (!key.ok()) {
    std::fprintf(stderr, "vsc sql: %s\n", key.status().ToString().c_str());
    return 2;
  }
  SqlSessionOptions o;
  o.director = *director;
  o.http_port = f.http_port;
  o.timeout = std::chrono::milliseconds(static_cast<int64_t>(f.timeout_ms));
  o.min_seq = f.min_seq;
  o.idempotency_key = f.idempotency_key;
  o.format = *format;
  o.interactive = f.execute.empty() && ::isatty(STDIN_FILENO) != 0;
  SqlSession session(o, *key);
  session.Begin();
  const int code =
      f.execute.empty() ? RunShell(session, *director) : RunOnce(session, f, std::move(params));
  session.End();
  return code;
}

}  // namespace

void AddSqlCommand(CLI::App& app) {
  auto f = std::make_shared<SqlFlags>();
  auto* cmd = app.add_subcommand(
      "sql",
      "SQL on the replicated database: writes sequenced by the director, reads from a replica");
  cmd->add_option("--director", f->director,
                  "director host (HOST:WRITE_PORT[,SQL_PORT] is still accepted)")
      ->type_name("HOST")
      ->capture_default_str();
  cmd->add_option("--write-port", f->write_port,
                  "the director's write_port (default 7300): writes, and reads through its relay")
      ->type_name("PORT");
  cmd->add_option("--http-port", f->http_port,
                  "the director's http_port, asked why when the write port refuses")
      ->type_name("PORT")
      ->capture_default_str();
  AddKeyOptions(cmd, &f->key_file, &f->insecure);
  cmd->add_option("-e,--execute", f->execute, "run these ';'-separated statements and exit")
      ->type_name("SQL");
  cmd->add_option("-p,--param", f->params,
                  "a parameter of the -e statement, in order: 42, 1.5, null, @FILE (a BLOB), "
                  "int:V, real:V, text:V, hex:HEX, @@TEXT (docs/sql_cli.md)")
      ->type_name("VALUE");
  cmd->add_option("--format", f->format, "output: table, csv (RFC 4180) or json")
      ->type_name("FORMAT")
      ->capture_default_str();
  cmd->add_option("--min-seq", f->min_seq,
                  "read only from replicas that applied this seq (read-your-writes)")
      ->type_name("SEQ");
  cmd->add_option("--idempotency-key", f->idempotency_key,
                  "with -e: send its one write request under this key; running the same command "
                  "again (after a timeout or a failover) applies nothing and prints the first "
                  "run's seq")
      ->type_name("KEY");
  AddMillisOption(cmd, "--timeout-ms", &f->timeout_ms,
                  "how long to wait for a write's answer, or for each page of a read");
  cmd->callback([f] { ExitCode() = RunSql(*f); });
}

}  // namespace vsc::cli

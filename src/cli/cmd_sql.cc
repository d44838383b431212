// vsc sql: the SQL client of the replicated database (DESIGN §7). SELECTs go to the director's
// SQL read port (UDP; a replica answers directly), everything else to its write port (TCP).
// One-shot with -e, else an interactive loop reading ';'-terminated statements from stdin.
// Statements between BEGIN and COMMIT are sent as one atomic batch at COMMIT. After a write,
// later reads in the same run ask for at least that write's seq (read-your-writes).
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/options.h"
#include "cli/secrets.h"
#include "client/sql_client.h"
#include "client/sql_text.h"
#include "client/table_printer.h"

namespace vsc::cli {
namespace {

struct SqlFlags {
  std::string director = "127.0.0.1";
  std::string key_file;
  bool insecure = false;
  std::string execute;
  uint64_t min_seq = 0;
  uint16_t write_port = 0;  // 0: the one in --director, else 7300
  uint16_t sql_port = 0;    // 0: the one in --director, else 7301
  double timeout_ms = 5000;
  double read_timeout_ms = 1000;
};

bool IsWord(const std::string& sql, std::initializer_list<const char*> words) {
  std::string first;
  for (char c : sql) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      if (first.empty()) continue;
      break;
    }
    first += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  for (const char* w : words) {
    if (first == w) return true;
  }
  return false;
}

class Session {
 public:
  Session(const SqlFlags& f, client::SqlDirector d, proto::ClusterKey key)
      : flags_(f), director_(std::move(d)), key_(std::move(key)), min_seq_(f.min_seq) {}

  // Runs one statement; false when it failed (the message is printed).
  bool Run(const std::string& sql, bool interactive) {
    if (IsWord(sql, {"BEGIN"})) {
      if (batch_) return Fail("already inside BEGIN; COMMIT or ROLLBACK first");
      batch_.emplace();
      return true;
    }
    if (IsWord(sql, {"COMMIT", "END"})) {
      if (!batch_) return Fail("COMMIT without BEGIN");
      std::vector<proto::SqlStatement> batch = std::move(*batch_);
      batch_.reset();
      if (batch.empty()) return true;
      return Write(std::move(batch));
    }
    if (IsWord(sql, {"ROLLBACK"})) {
      if (!batch_) return Fail("ROLLBACK without BEGIN");
      std::printf("batch of %zu statement(s) discarded; nothing was sent\n", batch_->size());
      batch_.reset();
      return true;
    }
    if (client::IsReadStatement(sql)) {
      if (batch_) {
        return Fail(
            "reads inside BEGIN ... COMMIT are not supported: the batch is applied "
            "atomically at COMMIT; read before BEGIN or after COMMIT");
      }
      return Read(sql, interactive);
    }
    if (batch_) {
      batch_->push_back(client::MakeStatement(sql));
      return true;
    }
    std::vector<proto::SqlStatement> one;
    one.push_back(client::MakeStatement(sql));
    return Write(std::move(one));
  }

  bool in_batch() const { return batch_.has_value(); }

 private:
  bool Fail(const std::string& message) {
    std::fprintf(stderr, "error: %s\n", message.c_str());
    return false;
  }

  bool Read(const std::string& sql, bool interactive) {
    if (!reader_) {
      auto r = client::ReadClient::Open(
          director_.host, director_.read_port, key_,
          std::chrono::milliseconds(static_cast<int64_t>(flags_.read_timeout_ms)), 1);
      if (!r.ok()) return Fail(r.status().message());
      reader_ = std::make_unique<client::ReadClient>(std::move(r).value());
    }
    auto answer = reader_->Query(client::MakeStatement(sql), min_seq_);
    if (!answer.ok()) return Fail(answer.status().message());
    if (!answer->ok()) return Fail(answer->error());
    std::fputs(client::RenderReadResponse(*answer).c_str(), stdout);
    if (interactive) {
      std::printf("-- from %s at seq %llu\n", answer->replica_id().c_str(),
                  static_cast<unsigned long long>(answer->applied_seq()));
    }
    return true;
  }

  bool Write(std::vector<proto::SqlStatement> statements) {
    if (!writer_) {
      auto w = client::WriteClient::Connect(
          director_.host, director_.write_port, key_,
          std::chrono::milliseconds(static_cast<int64_t>(flags_.timeout_ms)));
      if (!w.ok()) return Fail(w.status().message());
      writer_ = std::make_unique<client::WriteClient>(std::move(w).value());
    }
    auto answer = writer_->Execute(std::move(statements));
    if (!answer.ok()) {
      writer_.reset();  // the connection is in an unknown state; reconnect next time
      return Fail(answer.status().message());
    }
    if (!answer->ok()) return Fail(answer->error());
    min_seq_ = std::max(min_seq_, answer->seq());
    std::printf("ok, %lld rows changed, seq %llu\n", static_cast<long long>(answer->rows_changed()),
                static_cast<unsigned long long>(answer->seq()));
    return true;
  }

  const SqlFlags& flags_;
  client::SqlDirector director_;
  proto::ClusterKey key_;
  uint64_t min_seq_;
  std::unique_ptr<client::ReadClient> reader_;
  std::unique_ptr<client::WriteClient> writer_;
  std::optional<std::vector<proto::SqlStatement>> batch_;
};

int RunSql(const SqlFlags& f) {
  auto director = client::ParseSqlDirector(f.director);
  if (!director.ok()) {
    std::fprintf(stderr, "vsc sql: %s\n", director.status().message().c_str());
    return 2;
  }
  if (f.write_port != 0) director->write_port = f.write_port;
  if (f.sql_port != 0) director->read_port = f.sql_port;
  auto key = ResolveClusterKey(f.key_file, f.insecure);
  if (!key.ok()) {
    std::fprintf(stderr, "vsc sql: %s\n", key.status().ToString().c_str());
    return 2;
  }
  Session session(f, *director, *key);
  client::SqlSplitter splitter;
  if (!f.execute.empty()) {
    splitter.Feed(f.execute);
    std::vector<std::string> statements;
    while (auto s = splitter.Next()) statements.push_back(std::move(*s));
    if (std::string rest = splitter.TakeRest(); !rest.empty()) statements.push_back(rest);
    int failures = 0;
    for (const auto& s : statements) failures += session.Run(s, false) ? 0 : 1;
    if (session.in_batch()) {
      std::fprintf(stderr, "error: BEGIN without COMMIT; the batch was not sent\n");
      ++failures;
    }
    return failures == 0 ? 0 : 1;
  }
  const bool tty = ::isatty(STDIN_FILENO) != 0;
  if (tty) {
    std::printf(
        "vsc sql: writes to %s:%u, reads from %s:%u; end statements with ';', Ctrl-D "
        "to quit\n",
        director->host.c_str(), director->write_port, director->host.c_str(), director->read_port);
  }
  int failures = 0;
  std::string line;
  for (;;) {
    if (tty) {
      std::fputs(splitter.pending() ? "   -> " : (session.in_batch() ? "vsc*> " : "vsc> "), stdout);
      std::fflush(stdout);
    }
    if (!std::getline(std::cin, line)) break;
    splitter.Feed(line + "\n");
    while (auto s = splitter.Next()) failures += session.Run(*s, tty) ? 0 : 1;
    std::fflush(stdout);
  }
  if (std::string rest = splitter.TakeRest(); !rest.empty()) {
    failures += session.Run(rest, tty) ? 0 : 1;
  }
  if (tty) std::printf("\n");
  // Piped input is a script: its failures show in the exit code.
  return tty || failures == 0 ? 0 : 1;
}

}  // namespace

void AddSqlCommand(CLI::App& app) {
  auto f = std::make_shared<SqlFlags>();
  auto* cmd = app.add_subcommand(
      "sql", "SQL on the replicated database: SELECT to the read port, writes to the write port");
  cmd->add_option("--director", f->director,
                  "director host (HOST:WRITE_PORT[,SQL_PORT] is still accepted)")
      ->type_name("HOST")
      ->capture_default_str();
  cmd->add_option("--write-port", f->write_port, "the director's write_port (default 7300)")
      ->type_name("PORT");
  cmd->add_option("--sql-port", f->sql_port, "the director's sql_port (default 7301)")
      ->type_name("PORT");
  AddKeyOptions(cmd, &f->key_file, &f->insecure);
  cmd->add_option("-e,--execute", f->execute, "run these ';'-separated statements and exit")
      ->type_name("SQL");
  cmd->add_option("--min-seq", f->min_seq,
                  "read only from replicas that applied this seq (read-your-writes)")
      ->type_name("SEQ");
  AddMillisOption(cmd, "--timeout-ms", &f->timeout_ms, "write timeout");
  AddMillisOption(cmd, "--read-timeout-ms", &f->read_timeout_ms, "read timeout (one retry)");
  cmd->callback([f] { ExitCode() = RunSql(*f); });
}

}  // namespace vsc::cli

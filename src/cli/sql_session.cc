#include "cli/sql_session.h"

#include <cctype>
#include <initializer_list>

#include "cli/line_reader.h"
#include "cli/sql_probe.h"
#include "client/sql_text.h"
#include "client/table_printer.h"
#include "net/endpoint.h"

namespace vsc::cli {
namespace {

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

}  // namespace

SqlSession::SqlSession(SqlSessionOptions options, proto::ClusterKey key)
    : options_(std::move(options)),
      key_(std::move(key)),
      min_seq_(options_.min_seq),
      writer_(client::MakeResultWriter(options_.format)) {}

void SqlSession::Begin() { Out(writer_->Start()); }
void SqlSession::End() { Out(writer_->Finish()); }

void SqlSession::Out(const std::string& text) {
  if (text.empty()) return;
  std::fwrite(text.data(), 1, text.size(), stdout);
}

bool SqlSession::Fail(const std::string& message) {
  Out(writer_->Error(message));
  std::fflush(stdout);
  std::fprintf(stderr, "error: %s\n", message.c_str());
  return false;
}

bool SqlSession::Run(const std::string& sql, std::vector<proto::SqlValue> params) {
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
    std::fprintf(stderr, "batch of %zu statement(s) discarded; nothing was sent\n", batch_->size());
    batch_.reset();
    return true;
  }
  if (client::IsReadStatement(sql)) {
    if (batch_) {
      return Fail(
          "reads inside BEGIN ... COMMIT are not supported: the batch is applied "
          "atomically at COMMIT; read before BEGIN or after COMMIT");
    }
    return Read(client::MakeStatement(sql, std::move(params)), false, "");
  }
  if (batch_) {
    batch_->push_back(client::MakeStatement(sql, std::move(params)));
    return true;
  }
  std::vector<proto::SqlStatement> one;
  one.push_back(client::MakeStatement(sql, std::move(params)));
  return Write(std::move(one));
}

size_t SqlSession::WriteRequests(const std::vector<std::string>& statements) {
  size_t requests = 0;
  std::optional<size_t> batch;  // statements since BEGIN
  for (const auto& sql : statements) {
    if (IsWord(sql, {"BEGIN"})) {
      batch = 0;
    } else if (IsWord(sql, {"COMMIT", "END"})) {
      requests += batch.value_or(0) > 0 ? 1 : 0;
      batch.reset();
    } else if (IsWord(sql, {"ROLLBACK"})) {
      batch.reset();
    } else if (batch) {
      ++*batch;
    } else if (!client::IsReadStatement(sql)) {
      ++requests;
    }
  }
  return requests;
}

bool SqlSession::RunCommand(const client::ShellCommand& command) {
  const bool raw = options_.format == client::OutputFormat::kTable;
  const bool schema = command.kind == client::ShellCommand::Kind::kSchema;
  return Read(client::ShellQuery(command), raw, schema ? ";\n" : "\n");
}

Result<client::WriteClient*> SqlSession::Connection() {
  if (conn_) return conn_.get();
  const auto& d = options_.director;
  auto c = client::WriteClient::Connect(d.host, d.write_port, key_, options_.timeout);
  if (!c.ok()) {
    if (c.status().code() == Code::kUnavailable &&
        c.status().message().find("refused") != std::string::npos) {
      if (auto off = ReplicationOffMessage(d.host, options_.http_port, options_.timeout)) {
        return Unavailable(*off + " (said by its HTTP API at " +
                           net::HostPort(d.host, options_.http_port) + "; its write port " +
                           std::to_string(d.write_port) + " is closed)");
      }
    }
    return c.status();
  }
  conn_ = std::make_unique<client::WriteClient>(std::move(c).value());
  return conn_.get();
}

bool SqlSession::Read(const proto::SqlStatement& statement, bool raw, const std::string& suffix) {
  auto conn = Connection();
  if (!conn.ok()) return Fail(conn.status().message());
  bool begun = false;
  auto on_page = [&](const proto::ReadResponse& page) -> Status {
    if (LineReader::TakeInterrupt())
      return FailedPrecondition("interrupted (Ctrl-C); the rest of the rows were not read");
    if (raw) {
      for (const auto& row : page.rows()) {
        if (row.values_size() > 0) Out(client::FormatValue(row.values(0)) + suffix);
      }
    } else {
      if (!begun) Out(writer_->BeginRows(page));
      begun = true;
      Out(writer_->Rows(page));
    }
    std::fflush(stdout);
    return Status::Ok();
  };
  auto answer = (*conn)->Read(statement, min_seq_, on_page);
  if (!answer.ok()) {
    conn_.reset();  // the connection is in an unknown state; reconnect next time
    if (begun) Out(writer_->EndRows(0));
    return Fail(answer.status().message());
  }
  if (!answer->ok()) {
    if (begun) Out(writer_->EndRows(answer->applied_seq()));
    return Fail(begun ? answer->error() + " (the rows above are incomplete)" : answer->error());
  }
  if (!raw) {
    if (!begun) Out(writer_->BeginRows(*answer));
    Out(writer_->EndRows(answer->applied_seq()));
    if (options_.interactive && options_.format == client::OutputFormat::kTable) {
      Out("-- from " + answer->replica_id() + " at seq " + std::to_string(answer->applied_seq()) +
          "\n");
    }
  }
  std::fflush(stdout);
  return true;
}

bool SqlSession::Write(std::vector<proto::SqlStatement> statements) {
  auto conn = Connection();
  if (!conn.ok()) return Fail(conn.status().message());
  auto answer = (*conn)->Execute(std::move(statements), options_.idempotency_key);
  if (!answer.ok()) {
    conn_.reset();  // the connection is in an unknown state; reconnect next time
    return Fail(answer.status().message());
  }
  if (!answer->ok()) return Fail(answer->error());
  min_seq_ = std::max(min_seq_, answer->seq());
  client::WriteSummary w;
  w.rows_changed = answer->rows_changed();
  w.seq = answer->seq();
  w.duplicate = answer->duplicate();
  if (answer->statements_size() > 0) {
    w.last_insert_id = answer->statements(answer->statements_size() - 1).last_insert_id();
  }
  Out(writer_->Write(w));
  std::fflush(stdout);
  return true;
}

}  // namespace vsc::cli

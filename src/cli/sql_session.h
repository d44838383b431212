// SqlSession: what `vsc sql` does with each statement (DESIGN §7). Writes go to the director's
// write port (TCP) and print their seq; reads (client::IsReadStatement) go over the same
// connection to the director's read relay and print page by page as the replica streams them
// (so a result of any size needs one page of memory). BEGIN ... COMMIT collects the statements
// between and sends them as one atomic batch at COMMIT. After a write, later reads ask for at
// least its seq (read-your-writes). Output goes through a client::ResultWriter (--format).
//
// A refused connection is explained: when the director's HTTP API says replication is off
// (sql_probe.h), that is the error, on every path (writes, reads, .tables, .schema).
//
// Thread: the main thread. Lifetime: one per `vsc sql` run.
#pragma once

#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "client/result_writer.h"
#include "client/shell_command.h"
#include "client/sql_client.h"
#include "proto/cluster_key.h"

namespace vsc::cli {

struct SqlSessionOptions {
  client::SqlDirector director;
  uint16_t http_port = 4001;  // asked why, when the write port refuses
  Duration timeout = std::chrono::seconds(5);
  uint64_t min_seq = 0;
  client::OutputFormat format = client::OutputFormat::kTable;
  bool interactive = false;  // a terminal: "-- from REPLICA at seq N" after each read table
  // Sent with every write (the caller lets it name one write request: WriteRequests).
  std::string idempotency_key;
};

class SqlSession {
 public:
  SqlSession(SqlSessionOptions options, proto::ClusterKey key);

  // Runs one statement with its parameters; false when it failed (the message is printed).
  bool Run(const std::string& sql, std::vector<proto::SqlValue> params = {});
  // Runs .tables or .schema (the other shell commands are the caller's).
  bool RunCommand(const client::ShellCommand& command);
  bool in_batch() const { return batch_.has_value(); }
  // How many write requests these statements make when run in order: one per write outside
  // BEGIN ... COMMIT, one per BEGIN ... COMMIT that holds a statement; reads make none.
  static size_t WriteRequests(const std::vector<std::string>& statements);

  // The format's opening and closing text (a JSON document's brackets), once each.
  void Begin();
  void End();

 private:
  bool Fail(const std::string& message);
  void Out(const std::string& text);
  // The connection, opened on first use; the error explains a director with replication off.
  Result<client::WriteClient*> Connection();
  // `raw`: .tables / .schema in the table format: the first column's text, one row per line,
  // each followed by `suffix`.
  bool Read(const proto::SqlStatement& statement, bool raw, const std::string& suffix);
  bool Write(std::vector<proto::SqlStatement> statements);

  SqlSessionOptions options_;
  proto::ClusterKey key_;
  uint64_t min_seq_;
  std::unique_ptr<client::ResultWriter> writer_;
  std::unique_ptr<client::WriteClient> conn_;
  std::optional<std::vector<proto::SqlStatement>> batch_;
};

}  // namespace vsc::cli

// SqlReader: runs the SQL reads a real server answers (DESIGN §7 read path) on one worker's
// read-only connection to the replica database. Each request runs in its own read transaction
// (a WAL snapshot), which also reads the replica's applied_seq, so the position reported and
// the min_seq check describe exactly the data the query saw.
//
// Refused, each with a message saying what to do instead: statements that can change the
// database (sqlite3_stmt_readonly), statements that return no columns (BEGIN, COMMIT...), more
// than one statement, a parameter count that does not match, a query that runs longer than the
// step budget, and a result that does not fit one datagram (ReadResponseBuilder).
//
// Thread: one worker. Move-only. Open fails like store::Database::Open.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "common/status.h"
#include "common/utf8.h"
#include "proto/control.pb.h"
#include "realserver/page_source.h"
#include "realserver/read_response_builder.h"
#include "store/database.h"

namespace vsc::realserver {

struct SqlReaderOptions {
  // SQLite VM steps a read may take before it is interrupted (about a second of CPU here), so
  // one query cannot stall a worker's lookups indefinitely.
  uint64_t max_vm_steps = 200'000'000;
  size_t max_datagram = kMaxSqlDatagram;
};

class SqlReader {
 public:
  static Result<SqlReader> Open(const std::string& path, SqlReaderOptions options = {});

  SqlReader(SqlReader&&) noexcept;
  SqlReader& operator=(SqlReader&&) noexcept;
  ~SqlReader();

  // Answers one request; never fails (errors are ok=false answers). `sender_bytes`: the length
  // of the envelope sender the answer will be sealed with (the size limit includes it).
  proto::ReadResponse Run(const proto::ReadRequest& request, const std::string& replica_id,
                          size_t sender_bytes);

  // The TCP read path: the answer in pages of at most `page_bytes` of rows each (more=true on
  // all but the last), each made when the caller asks for it (PageSource::Next) while the query
  // runs in one read transaction (so every page is of the same snapshot; the transaction ends
  // with the last page or when the source is destroyed). The request's max_rows / max_bytes
  // (capped by `limits`) bound the whole answer: past them the last page is an ok=false error
  // naming the cap, and the pages before it must be discarded by the receiver. The source
  // borrows this reader: destroy it first, and run nothing else on the reader meanwhile.
  struct PageLimits {
    size_t page_bytes = 256 * 1024;
    uint64_t max_rows = 10'000'000;
    uint64_t max_bytes = uint64_t{256} << 20;
  };
  std::unique_ptr<PageSource> Paged(const proto::ReadRequest& request,
                                    const std::string& replica_id, const PageLimits& limits);

  // The replica's applied_seq as the database holds it now (0 before the first entry).
  Result<uint64_t> AppliedSeq();

 private:
  struct Impl;
  struct Prepared;
  class QueryPages;
  Prepared Begin(const proto::ReadRequest& request, const std::string& replica_id);
  Result<bool> StepRow(Prepared& p, proto::SqlRow& row);
  std::vector<std::string> ColumnNames(Prepared& p);
  void Finish(Prepared& p);
  explicit SqlReader(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

using ::vsc::IsValidUtf8;  // common/utf8.h

}  // namespace vsc::realserver

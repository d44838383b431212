// How `vsc sql` prints results (--format table|csv|json), streamed: a read is BeginRows (its
// first page), Rows for every page as it arrives, then EndRows; a write is one Write; a failed
// statement one Error. Each call returns the text to put on stdout, in order; nothing is held
// back but what a format needs to stay valid (the JSON document's brackets).
//
// - table: psql-like aligned table (table_printer.h), "(N rows)"; writes "ok, N rows changed,
//   seq S"; errors go to stderr only (the caller prints them).
// - csv: RFC 4180: a header line of column names, one line per row, CRLF line ends; a field
//   with ',', '"', CR or LF is quoted with '"' doubled; NULL is an empty field, an empty TEXT
//   is "" (so the two differ); BLOBs are base64. Several results: a blank line between them.
//   Writes and errors print nothing on stdout.
// - json: one document for the run, shaped as rqlite's /db/request answer:
//   {"results":[{"columns":[...],"types":[...],"values":[[...],...],"seq":S},
//               {"rows_affected":N,"last_insert_id":I,"seq":S}, {"error":"..."}]}
//   integers and reals as JSON numbers, TEXT as strings, BLOBs as base64 strings, NULL as null;
//   "types" are the declared types, lowercased ("" for an expression).
// Pure; one writer per run; thread-compatible.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "common/status.h"
#include "proto/replication.pb.h"

namespace vsc::client {

enum class OutputFormat { kTable, kCsv, kJson };

// "table", "csv" or "json"; InvalidArgument naming the choices.
Result<OutputFormat> ParseOutputFormat(std::string_view name);

struct WriteSummary {
  int64_t rows_changed = 0;
  int64_t last_insert_id = 0;
  uint64_t seq = 0;
  bool duplicate = false;  // a retry of a keyed write: the original's outcome, applied once
};

class ResultWriter {
 public:
  virtual ~ResultWriter() = default;
  virtual std::string Start() { return ""; }
  virtual std::string BeginRows(const proto::ReadResponse& first_page) = 0;
  virtual std::string Rows(const proto::ReadResponse& page) = 0;
  // `applied_seq`: the replica's position when it answered (its last page's).
  virtual std::string EndRows(uint64_t applied_seq) = 0;
  virtual std::string Write(const WriteSummary& w) = 0;
  virtual std::string Error(const std::string& message) = 0;
  virtual std::string Finish() { return ""; }
};

std::unique_ptr<ResultWriter> MakeResultWriter(OutputFormat format);

}  // namespace vsc::client

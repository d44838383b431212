// The rqlite-compatible HTTP API's response codec (shared/reference/rqlite_api.md §1, §5): write
// results, rows (columns/types/values or the associative form) and the envelope, as rqlite
// writes them: every per-statement field omitted when zero or empty, `results` always present,
// BLOBs as base64, NULL as null, a declared type lowercased (an expression's type from its first
// row's value). Pure; the rows encoder appends page by page so a large result is encoded once,
// without holding its rows twice.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "proto/control.pb.h"

namespace vsc::director {

void AppendJsonString(std::string& out, std::string_view s);
void AppendJsonDouble(std::string& out, double d);  // shortest round trip; NaN/Inf → null

struct WriteOutcome {
  std::string error;  // non-empty: {"error": ...}
  int64_t last_insert_id = 0;
  int64_t rows_affected = 0;
  bool duplicate = false;  // the write's idempotency key was applied before: the original's
};
// One write result object. `associative` adds "rows":null as rqlite does; "duplicate":true
// when so (not an rqlite field).
std::string WriteResultJson(const WriteOutcome& w, bool associative,
                            std::optional<double> time_s = std::nullopt);
std::string ErrorResultJson(std::string_view error);

// How rows are written: rqlite's `associative`, `blob_array` (a BLOB as an array of byte values
// instead of base64) and `qualify_columns` (a column of a table named `table.column`).
struct RowsFormat {
  bool associative = false;
  bool blob_array = false;
  bool qualify_columns = false;
};

class RowsEncoder {
 public:
  explicit RowsEncoder(RowsFormat format) : associative_(format.associative), format_(format) {}
  explicit RowsEncoder(bool associative) : RowsEncoder(RowsFormat{associative}) {}
  // The first page carries columns and declared types; each page's rows are appended.
  void AddPage(const proto::ReadResponse& page);
  // Bytes of encoded row text so far (for the caller's cap).
  size_t encoded_bytes() const { return rows_.size(); }
  std::string Finish(std::optional<double> time_s = std::nullopt);

 private:
  void AppendRow(const proto::SqlRow& row);
  void AppendValue(const proto::SqlValue& v);

  bool associative_;
  RowsFormat format_;
  bool have_columns_ = false;
  std::vector<std::string> columns_;
  std::vector<std::string> types_;
  std::vector<size_t> order_;  // associative: column indexes in key order, duplicates dropped
  std::string rows_;           // the rows' JSON, comma-separated
  uint64_t row_count_ = 0;
};

// {"results":[...], "error":..., "time":..., "seq":...}: results always, the rest when set.
std::string EnvelopeJson(const std::vector<std::string>& results,
                         std::optional<std::string_view> error = std::nullopt,
                         std::optional<double> time_s = std::nullopt, uint64_t seq = 0);
// The same JSON with 4-space indentation (?pretty).
std::string PrettyJson(const std::string& compact);

}  // namespace vsc::director

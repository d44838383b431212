// Renders query results as an aligned text table, as psql does:
//
//    id | node    | size
//   ----+---------+------
//     1 | node-01 |  512
//   (1 row)
//
// Numbers are right-aligned, everything else left-aligned; widths count UTF-8 code points;
// control characters in cells are shown escaped (\n, \t, \xNN) so a row stays one line.
// TableWriter streams: the header goes out with the first page of rows, sized to that page;
// a later page's wider cell widens its column from there on (earlier lines are already out).
// Pure; thread-compatible.
#pragma once

#include <string>
#include <vector>

#include "proto/replication.pb.h"

namespace vsc::client {

struct Cell {
  std::string text;
  bool right_align = false;
};

class TableWriter {
 public:
  explicit TableWriter(std::vector<std::string> columns);
  // The lines of these rows (and the header before the first ones).
  std::string Rows(const std::vector<std::vector<Cell>>& rows);
  // The header if no row came, then "(N rows)".
  std::string End();
  uint64_t rows() const { return count_; }

 private:
  std::string Header() const;
  std::vector<std::string> heads_;
  std::vector<size_t> width_;
  bool header_done_ = false;
  uint64_t count_ = 0;
};

// The whole table at once (TableWriter with one page).
std::string RenderTable(const std::vector<std::string>& columns,
                        const std::vector<std::vector<Cell>>& rows);

// The rows of a ReadResponse page as cells (FormatValue, sql_text.h; numbers right-aligned).
std::vector<std::vector<Cell>> PageCells(const proto::ReadResponse& page);

// The rows of a successful single-page ReadResponse as a table.
std::string RenderReadResponse(const proto::ReadResponse& response);

// Display width of `text`: UTF-8 code points (continuation bytes do not count).
size_t DisplayWidth(const std::string& text);

}  // namespace vsc::client

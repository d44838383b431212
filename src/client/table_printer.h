// Renders query results as an aligned text table, as psql does:
//
//    id | node    | size
//   ----+---------+------
//     1 | node-01 |  512
//   (1 row)
//
// Numbers are right-aligned, everything else left-aligned; widths count UTF-8 code points;
// control characters in cells are shown escaped (\n, \t, \xNN) so a row stays one line.
// Pure; thread safe.
#pragma once

#include <string>
#include <vector>

#include "proto/replication.pb.h"

namespace vsc::client {

struct Cell {
  std::string text;
  bool right_align = false;
};

std::string RenderTable(const std::vector<std::string>& columns,
                        const std::vector<std::vector<Cell>>& rows);

// The rows of a successful ReadResponse, formatted with FormatValue (sql_text.h).
std::string RenderReadResponse(const proto::ReadResponse& response);

// Display width of `text`: UTF-8 code points (continuation bytes do not count).
size_t DisplayWidth(const std::string& text);

}  // namespace vsc::client

#include "client/table_printer.h"

#include <algorithm>

#include "client/sql_text.h"

namespace vsc::client {
namespace {

std::string Escape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (unsigned char c : s) {
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c < 0x20 || c == 0x7f) {
      static const char* kHex = "0123456789abcdef";
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

void Pad(std::string& out, const std::string& text, size_t width, bool right) {
  const size_t w = DisplayWidth(text);
  const size_t fill = width > w ? width - w : 0;
  if (right) out.append(fill, ' ');
  out += text;
  if (!right) out.append(fill, ' ');
}

}  // namespace

size_t DisplayWidth(const std::string& text) {
  size_t n = 0;
  for (unsigned char c : text) {
    if ((c & 0xC0) != 0x80) ++n;
  }
  return n;
}

TableWriter::TableWriter(std::vector<std::string> columns) {
  for (const auto& c : columns) {
    heads_.push_back(Escape(c));
    width_.push_back(DisplayWidth(heads_.back()));
  }
}

std::string TableWriter::Header() const {
  std::string out;
  for (size_t i = 0; i < heads_.size(); ++i) {
    out += i == 0 ? " " : " | ";
    // Headers are centred, as psql does.
    const size_t w = DisplayWidth(heads_[i]);
    const size_t left = (width_[i] - w) / 2;
    out.append(left, ' ');
    out += heads_[i];
    out.append(width_[i] - w - left, ' ');
  }
  out += "\n";
  for (size_t i = 0; i < heads_.size(); ++i) {
    if (i > 0) out += "+";
    out.append(width_[i] + 2, '-');
  }
  out += "\n";
  return out;
}

std::string TableWriter::Rows(const std::vector<std::vector<Cell>>& rows) {
  std::vector<std::vector<Cell>> cells;
  cells.reserve(rows.size());
  for (const auto& row : rows) {
    std::vector<Cell> r;
    for (size_t i = 0; i < heads_.size(); ++i) {
      Cell c = i < row.size() ? row[i] : Cell{};
      c.text = Escape(c.text);
      width_[i] = std::max(width_[i], DisplayWidth(c.text));
      r.push_back(std::move(c));
    }
    cells.push_back(std::move(r));
  }
  std::string out;
  if (!header_done_ && !cells.empty()) {
    out += Header();
    header_done_ = true;
  }
  for (const auto& r : cells) {
    for (size_t i = 0; i < r.size(); ++i) {
      out += i == 0 ? " " : " | ";
      Pad(out, r[i].text, width_[i], r[i].right_align);
    }
    out += "\n";
  }
  count_ += cells.size();
  return out;
}

std::string TableWriter::End() {
  std::string out = header_done_ ? "" : Header();
  header_done_ = true;
  out += "(" + std::to_string(count_) + (count_ == 1 ? " row)\n" : " rows)\n");
  return out;
}

std::string RenderTable(const std::vector<std::string>& columns,
                        const std::vector<std::vector<Cell>>& rows) {
  TableWriter t(columns);
  std::string out = t.Rows(rows);
  return out + t.End();
}

std::vector<std::vector<Cell>> PageCells(const proto::ReadResponse& page) {
  std::vector<std::vector<Cell>> rows;
  rows.reserve(page.rows_size());
  for (const auto& row : page.rows()) {
    std::vector<Cell> r;
    for (const auto& v : row.values()) {
      const bool number =
          v.value_case() == proto::SqlValue::kInteger || v.value_case() == proto::SqlValue::kReal;
      r.push_back(Cell{FormatValue(v), number});
    }
    rows.push_back(std::move(r));
  }
  return rows;
}

std::string RenderReadResponse(const proto::ReadResponse& response) {
  return RenderTable({response.columns().begin(), response.columns().end()}, PageCells(response));
}

}  // namespace vsc::client

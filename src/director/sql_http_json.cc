#include "director/sql_http_json.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <nlohmann/json.hpp>
#include <numeric>

#include "common/base64.h"

namespace vsc::director {
namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

std::string_view ValueTypeName(const proto::SqlValue& v) {
  switch (v.value_case()) {
    case proto::SqlValue::kInteger:
      return "integer";
    case proto::SqlValue::kReal:
      return "real";
    case proto::SqlValue::kText:
      return "text";
    case proto::SqlValue::kBlob:
      return "blob";
    default:
      return "";
  }
}

void AppendInt(std::string& out, int64_t v) {
  char buf[24];
  auto [p, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  out.append(buf, p);
}

}  // namespace

void AppendJsonString(std::string& out, std::string_view s) {
  static const char* kHex = "0123456789abcdef";
  out.push_back('"');
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20) {
          out += "\\u00";
          out.push_back(kHex[c >> 4]);
          out.push_back(kHex[c & 15]);
        } else {
          out.push_back(static_cast<char>(c));
        }
    }
  }
  out.push_back('"');
}

void AppendJsonDouble(std::string& out, double d) {
  if (!std::isfinite(d)) {
    out += "null";
    return;
  }
  char buf[32];
  auto [p, ec] = std::to_chars(buf, buf + sizeof(buf), d);
  out.append(buf, p);
}

std::string WriteResultJson(const WriteOutcome& w, bool associative, std::optional<double> time_s) {
  std::string out = "{";
  auto sep = [&] {
    if (out.size() > 1) out.push_back(',');
  };
  if (!w.error.empty()) {
    out += "\"error\":";
    AppendJsonString(out, w.error);
  } else {
    if (w.last_insert_id != 0) {
      out += "\"last_insert_id\":";
      AppendInt(out, w.last_insert_id);
    }
    if (w.rows_affected != 0) {
      sep();
      out += "\"rows_affected\":";
      AppendInt(out, w.rows_affected);
    }
  }
  if (w.duplicate) {
    sep();
    out += "\"duplicate\":true";
  }
  if (time_s) {
    sep();
    out += "\"time\":";
    AppendJsonDouble(out, *time_s);
  }
  if (associative && w.error.empty()) {
    sep();
    out += "\"rows\":null";
  }
  out.push_back('}');
  return out;
}

std::string ErrorResultJson(std::string_view error) {
  std::string out = "{\"error\":";
  AppendJsonString(out, error);
  out.push_back('}');
  return out;
}

void RowsEncoder::AddPage(const proto::ReadResponse& page) {
  if (!have_columns_) {
    have_columns_ = true;
    columns_.assign(page.columns().begin(), page.columns().end());
    if (format_.qualify_columns) {
      // Only a column read from a table has one; an expression keeps its name (rqlite).
      for (int i = 0; i < page.columns_size() && i < page.tables_size(); ++i) {
        if (!page.tables(i).empty()) columns_[i] = page.tables(i) + "." + columns_[i];
      }
    }
    for (int i = 0; i < page.columns_size(); ++i) {
      types_.push_back(i < page.decltypes_size() ? Lower(page.decltypes(i)) : "");
    }
    order_.resize(columns_.size());
    std::iota(order_.begin(), order_.end(), size_t{0});
    // Go marshals a map: keys sorted, a repeated name keeps its last column.
    std::stable_sort(order_.begin(), order_.end(),
                     [&](size_t a, size_t b) { return columns_[a] < columns_[b]; });
    std::vector<size_t> unique;
    for (size_t k = 0; k < order_.size(); ++k) {
      if (k + 1 < order_.size() && columns_[order_[k]] == columns_[order_[k + 1]]) continue;
      unique.push_back(order_[k]);
    }
    order_ = std::move(unique);
  }
  for (const proto::SqlRow& row : page.rows()) {
    if (row_count_ == 0) {
      for (size_t c = 0; c < types_.size() && c < static_cast<size_t>(row.values_size()); ++c) {
        if (types_[c].empty()) types_[c] = ValueTypeName(row.values(static_cast<int>(c)));
      }
    }
    AppendRow(row);
  }
}

void RowsEncoder::AppendValue(const proto::SqlValue& v) {
  switch (v.value_case()) {
    case proto::SqlValue::kInteger:
      AppendInt(rows_, v.integer());
      break;
    case proto::SqlValue::kReal:
      AppendJsonDouble(rows_, v.real());
      break;
    case proto::SqlValue::kText:
      AppendJsonString(rows_, v.text());
      break;
    case proto::SqlValue::kBlob:
      if (format_.blob_array) {
        rows_.push_back('[');
        for (size_t i = 0; i < v.blob().size(); ++i) {
          if (i > 0) rows_.push_back(',');
          AppendInt(rows_, static_cast<uint8_t>(v.blob()[i]));
        }
        rows_.push_back(']');
      } else {
        AppendJsonString(rows_, Base64Encode(v.blob()));
      }
      break;
    default:
      rows_ += "null";
  }
}

void RowsEncoder::AppendRow(const proto::SqlRow& row) {
  if (row_count_++ > 0) rows_.push_back(',');
  const proto::SqlValue null_value;
  auto value = [&](size_t c) -> const proto::SqlValue& {
    return c < static_cast<size_t>(row.values_size()) ? row.values(static_cast<int>(c))
                                                      : null_value;
  };
  if (associative_) {
    rows_.push_back('{');
    for (size_t k = 0; k < order_.size(); ++k) {
      if (k > 0) rows_.push_back(',');
      AppendJsonString(rows_, columns_[order_[k]]);
      rows_.push_back(':');
      AppendValue(value(order_[k]));
    }
    rows_.push_back('}');
    return;
  }
  rows_.push_back('[');
  for (size_t c = 0; c < columns_.size(); ++c) {
    if (c > 0) rows_.push_back(',');
    AppendValue(value(c));
  }
  rows_.push_back(']');
}

std::string RowsEncoder::Finish(std::optional<double> time_s) {
  std::string out = "{";
  if (associative_) {
    out += "\"types\":{";
    for (size_t k = 0; k < order_.size(); ++k) {
      if (k > 0) out.push_back(',');
      AppendJsonString(out, columns_[order_[k]]);
      out.push_back(':');
      AppendJsonString(out, types_[order_[k]]);
    }
    out += "},\"rows\":[";
    out += rows_;
    out += "]";
  } else {
    out += "\"columns\":[";
    for (size_t c = 0; c < columns_.size(); ++c) {
      if (c > 0) out.push_back(',');
      AppendJsonString(out, columns_[c]);
    }
    out += "],\"types\":[";
    for (size_t c = 0; c < types_.size(); ++c) {
      if (c > 0) out.push_back(',');
      AppendJsonString(out, types_[c]);
    }
    out += "]";
    if (row_count_ > 0) {
      out += ",\"values\":[";
      out += rows_;
      out += "]";
    }
  }
  rows_.clear();
  rows_.shrink_to_fit();
  if (time_s) {
    out += ",\"time\":";
    AppendJsonDouble(out, *time_s);
  }
  out.push_back('}');
  return out;
}

std::string EnvelopeJson(const std::vector<std::string>& results,
                         std::optional<std::string_view> error, std::optional<double> time_s,
                         uint64_t seq) {
  size_t total = 32;
  for (const auto& r : results) total += r.size() + 1;
  std::string out;
  out.reserve(total);
  out = "{\"results\":[";
  for (size_t i = 0; i < results.size(); ++i) {
    if (i > 0) out.push_back(',');
    out += results[i];
  }
  out.push_back(']');
  if (error && !error->empty()) {
    out += ",\"error\":";
    AppendJsonString(out, *error);
  }
  if (time_s) {
    out += ",\"time\":";
    AppendJsonDouble(out, *time_s);
  }
  if (seq != 0) {
    out += ",\"seq\":";
    AppendInt(out, static_cast<int64_t>(seq));
  }
  out.push_back('}');
  return out;
}

std::string PrettyJson(const std::string& compact) {
  auto doc = nlohmann::ordered_json::parse(compact, nullptr, false);
  if (doc.is_discarded()) return compact;
  return doc.dump(4);
}

}  // namespace vsc::director

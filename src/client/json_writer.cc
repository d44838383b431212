#include "client/json_writer.h"

#include <cctype>
#include <cmath>
#include <nlohmann/json.hpp>

#include "common/base64.h"

namespace vsc::client {
namespace {

std::string JsonString(const std::string& s) {
  // Invalid UTF-8 cannot come in a proto3 string; replace it rather than throw if it ever did.
  return nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

std::string JsonValue(const proto::SqlValue& v) {
  switch (v.value_case()) {
    case proto::SqlValue::kInteger:
      return std::to_string(v.integer());
    case proto::SqlValue::kReal:
      if (std::isinf(v.real())) return v.real() > 0 ? "1e999" : "-1e999";
      return nlohmann::json(v.real()).dump();  // NaN (SQLite has none) would be null
    case proto::SqlValue::kText:
      return JsonString(v.text());
    case proto::SqlValue::kBlob:
      return "\"" + Base64Encode(v.blob()) + "\"";
    case proto::SqlValue::kNull:
    case proto::SqlValue::VALUE_NOT_SET:
      break;
  }
  return "null";
}

std::string JsonWriter::BeginRows(const proto::ReadResponse& first_page) {
  std::string out = Separator() + "{\"columns\":[";
  for (int i = 0; i < first_page.columns_size(); ++i) {
    if (i > 0) out += ',';
    out += JsonString(first_page.columns(i));
  }
  out += "],\"types\":[";
  for (int i = 0; i < first_page.columns_size(); ++i) {
    if (i > 0) out += ',';
    std::string t = i < first_page.decltypes_size() ? first_page.decltypes(i) : "";
    for (char& c : t) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    out += JsonString(t);
  }
  first_row_ = true;
  return out + "],\"values\":[";
}

std::string JsonWriter::Rows(const proto::ReadResponse& page) {
  std::string out;
  for (const auto& row : page.rows()) {
    out += first_row_ ? "[" : ",[";
    first_row_ = false;
    for (int i = 0; i < row.values_size(); ++i) {
      if (i > 0) out += ',';
      out += JsonValue(row.values(i));
    }
    out += ']';
  }
  return out;
}

std::string JsonWriter::EndRows(uint64_t applied_seq) {
  return "],\"seq\":" + std::to_string(applied_seq) + "}";
}

std::string JsonWriter::Write(const WriteSummary& w) {
  return Separator() + "{\"last_insert_id\":" + std::to_string(w.last_insert_id) +
         ",\"rows_affected\":" + std::to_string(w.rows_changed) +
         ",\"seq\":" + std::to_string(w.seq) + (w.duplicate ? ",\"duplicate\":true}" : "}");
}

std::string JsonWriter::Error(const std::string& message) {
  return Separator() + "{\"error\":" + JsonString(message) + "}";
}

}  // namespace vsc::client

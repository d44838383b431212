#include "client/csv_writer.h"

#include "client/sql_text.h"
#include "common/base64.h"

namespace vsc::client {

std::string CsvField(std::string_view text, bool quote_empty) {
  const bool quote =
      (quote_empty && text.empty()) || text.find_first_of(",\"\r\n") != std::string_view::npos;
  if (!quote) return std::string(text);
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string CsvValue(const proto::SqlValue& v) {
  switch (v.value_case()) {
    case proto::SqlValue::kText:
      return CsvField(v.text(), /*quote_empty=*/true);
    case proto::SqlValue::kBlob:
      return Base64Encode(v.blob());
    case proto::SqlValue::kNull:
    case proto::SqlValue::VALUE_NOT_SET:
      return "";
    default:
      return FormatValue(v);
  }
}

std::string CsvWriter::BeginRows(const proto::ReadResponse& first_page) {
  std::string out = results_++ > 0 ? "\r\n" : "";
  for (int i = 0; i < first_page.columns_size(); ++i) {
    if (i > 0) out += ',';
    out += CsvField(first_page.columns(i), /*quote_empty=*/true);
  }
  return out + "\r\n";
}

std::string CsvWriter::Rows(const proto::ReadResponse& page) {
  std::string out;
  for (const auto& row : page.rows()) {
    for (int i = 0; i < row.values_size(); ++i) {
      if (i > 0) out += ',';
      out += CsvValue(row.values(i));
    }
    out += "\r\n";
  }
  return out;
}

}  // namespace vsc::client

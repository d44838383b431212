// The csv format of result_writer.h (RFC 4180). Pure; thread-compatible.
#pragma once

#include <string>
#include <string_view>

#include "client/result_writer.h"

namespace vsc::client {

// One field: quoted when it holds ',', '"', CR or LF, or is empty (quote_empty).
std::string CsvField(std::string_view text, bool quote_empty);
// A value as a field: NULL empty, TEXT as CsvField (empty quoted), BLOB base64, numbers as
// FormatValue (sql_text.h).
std::string CsvValue(const proto::SqlValue& v);

class CsvWriter : public ResultWriter {
 public:
  std::string BeginRows(const proto::ReadResponse& first_page) override;
  std::string Rows(const proto::ReadResponse& page) override;
  std::string EndRows(uint64_t) override { return ""; }
  std::string Write(const WriteSummary&) override { return ""; }
  std::string Error(const std::string&) override { return ""; }

 private:
  int results_ = 0;
};

}  // namespace vsc::client

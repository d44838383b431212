// The json format of result_writer.h (rqlite's /db/request shape). Pure; thread-compatible.
#pragma once

#include <string>

#include "client/result_writer.h"

namespace vsc::client {

// A value as JSON: numbers, strings, base64 strings for BLOBs, null. A real that is not finite
// (SQLite's 1e999) is written as ±1e999, which JSON readers take as infinity.
std::string JsonValue(const proto::SqlValue& v);

class JsonWriter : public ResultWriter {
 public:
  std::string Start() override { return "{\"results\":["; }
  std::string BeginRows(const proto::ReadResponse& first_page) override;
  std::string Rows(const proto::ReadResponse& page) override;
  std::string EndRows(uint64_t applied_seq) override;
  std::string Write(const WriteSummary& w) override;
  std::string Error(const std::string& message) override;
  std::string Finish() override { return "\n]}\n"; }

 private:
  std::string Separator() { return results_++ > 0 ? ",\n" : "\n"; }
  int results_ = 0;
  bool first_row_ = true;
};

}  // namespace vsc::client

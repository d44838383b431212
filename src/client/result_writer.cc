#include "client/result_writer.h"

#include <optional>

#include "client/csv_writer.h"
#include "client/json_writer.h"
#include "client/table_printer.h"

namespace vsc::client {
namespace {

class TableResultWriter : public ResultWriter {
 public:
  std::string BeginRows(const proto::ReadResponse& first_page) override {
    table_.emplace(
        std::vector<std::string>(first_page.columns().begin(), first_page.columns().end()));
    return "";
  }
  std::string Rows(const proto::ReadResponse& page) override {
    return table_ ? table_->Rows(PageCells(page)) : "";
  }
  std::string EndRows(uint64_t) override {
    std::string out = table_ ? table_->End() : "";
    table_.reset();
    return out;
  }
  std::string Write(const WriteSummary& w) override {
    return "ok, " + std::to_string(w.rows_changed) + " rows changed, seq " + std::to_string(w.seq) +
           (w.duplicate ? " (a retry: this key's write was applied once, at that seq)" : "") + "\n";
  }
  std::string Error(const std::string&) override { return ""; }

 private:
  std::optional<TableWriter> table_;
};

}  // namespace

Result<OutputFormat> ParseOutputFormat(std::string_view name) {
  if (name == "table") return OutputFormat::kTable;
  if (name == "csv") return OutputFormat::kCsv;
  if (name == "json") return OutputFormat::kJson;
  return InvalidArgument("--format '" + std::string(name) + "': choose table, csv or json");
}

std::unique_ptr<ResultWriter> MakeResultWriter(OutputFormat format) {
  switch (format) {
    case OutputFormat::kCsv:
      return std::make_unique<CsvWriter>();
    case OutputFormat::kJson:
      return std::make_unique<JsonWriter>();
    case OutputFormat::kTable:
      break;
  }
  return std::make_unique<TableResultWriter>();
}

}  // namespace vsc::client

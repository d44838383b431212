#include "client/result_writer.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "client/csv_writer.h"
#include "client/json_writer.h"
#include "client/sql_client.h"
#include "client/table_printer.h"

namespace vsc::client {
namespace {

proto::ReadResponse Page(std::vector<std::vector<proto::SqlValue>> rows, bool more = false) {
  proto::ReadResponse p;
  p.set_ok(true);
  p.add_columns("id");
  p.add_columns("v");
  p.add_decltypes("INTEGER");
  p.add_decltypes("");
  for (auto& r : rows) {
    proto::SqlRow* row = p.add_rows();
    for (auto& v : r) *row->add_values() = v;
  }
  p.set_more(more);
  p.set_applied_seq(7);
  return p;
}

// Every writer call for a read of these pages, concatenated.
std::string Render(ResultWriter& w, const std::vector<proto::ReadResponse>& pages) {
  std::string out = w.BeginRows(pages.front());
  for (const auto& p : pages) out += w.Rows(p);
  return out + w.EndRows(pages.back().applied_seq());
}

TEST(ResultWriterTest, FormatNamesAreTableCsvJson) {
  EXPECT_EQ(*ParseOutputFormat("table"), OutputFormat::kTable);
  EXPECT_EQ(*ParseOutputFormat("csv"), OutputFormat::kCsv);
  EXPECT_EQ(*ParseOutputFormat("json"), OutputFormat::kJson);
  auto bad = ParseOutputFormat("xml");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("choose table, csv or json"), std::string::npos);
}

TEST(ResultWriterTest, CsvQuotesPerRfc4180AndTellsNullFromEmpty) {
  EXPECT_EQ(CsvField("plain", true), "plain");
  EXPECT_EQ(CsvField("a,b", true), "\"a,b\"");
  EXPECT_EQ(CsvField("say \"hi\"", true), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(CsvField("two\nlines", true), "\"two\nlines\"");
  EXPECT_EQ(CsvField("cr\r", true), "\"cr\r\"");
  EXPECT_EQ(CsvField("", true), "\"\"");
  EXPECT_EQ(CsvField("", false), "");
  EXPECT_EQ(CsvValue(SqlNull()), "");
  EXPECT_EQ(CsvValue(SqlText("")), "\"\"");
  EXPECT_EQ(CsvValue(SqlInt(-3)), "-3");
  EXPECT_EQ(CsvValue(SqlReal(2.0)), "2.0");
  EXPECT_EQ(CsvValue(SqlBlob(std::string("\0\xff\x10", 3))), "AP8Q");
  EXPECT_EQ(CsvValue(SqlBlob("")), "");
}

TEST(ResultWriterTest, CsvStreamsPagesUnderOneHeaderAndSeparatesResults) {
  CsvWriter w;
  const std::string first =
      Render(w, {Page({{SqlInt(1), SqlText("a,b")}}, true), Page({{SqlInt(2), SqlNull()}})});
  EXPECT_EQ(first, "id,v\r\n1,\"a,b\"\r\n2,\r\n");
  EXPECT_EQ(Render(w, {Page({})}), "\r\nid,v\r\n");
  EXPECT_EQ(w.Write(WriteSummary{1, 2, 3}), "");
  EXPECT_EQ(w.Error("boom"), "");
}

TEST(ResultWriterTest, JsonIsOneRqliteShapedDocumentThatParses) {
  JsonWriter w;
  std::string doc = w.Start();
  doc += Render(w, {Page({{SqlInt(1), SqlText("q\"\n\x01")}}, true),
                    Page({{SqlInt(2), SqlNull()}, {SqlReal(1.5), SqlBlob("hi")}})});
  doc += w.Write(WriteSummary{3, 9, 8});
  doc += w.Error("no such table: x");
  doc += Render(w, {Page({})});
  doc += w.Finish();
  auto j = nlohmann::json::parse(doc, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << doc;
  const auto& r = j["results"];
  ASSERT_EQ(r.size(), 4u) << doc;
  EXPECT_EQ(r[0]["columns"], nlohmann::json::parse(R"(["id","v"])"));
  EXPECT_EQ(r[0]["types"], nlohmann::json::parse(R"(["integer",""])"));
  EXPECT_EQ(r[0]["values"], nlohmann::json::parse(R"([[1,"q\"\n\u0001"],[2,null],[1.5,"aGk="]])"))
      << doc;
  EXPECT_EQ(r[0]["seq"], 7);
  EXPECT_EQ(r[1], nlohmann::json::parse(R"({"last_insert_id":9,"rows_affected":3,"seq":8})"));
  EXPECT_EQ(r[2], nlohmann::json::parse(R"({"error":"no such table: x"})"));
  EXPECT_EQ(r[3]["values"], nlohmann::json::array());
  // An empty run is a valid document too.
  JsonWriter empty;
  EXPECT_EQ(nlohmann::json::parse(empty.Start() + empty.Finish()),
            nlohmann::json::parse(R"({"results":[]})"));
}

TEST(ResultWriterTest, JsonValuesKeepTheirTypes) {
  EXPECT_EQ(JsonValue(SqlInt(INT64_MIN)), "-9223372036854775808");
  EXPECT_EQ(JsonValue(SqlReal(0.1)), "0.1");
  EXPECT_EQ(JsonValue(SqlReal(1e300 * 1e300)), "1e999");
  EXPECT_EQ(JsonValue(SqlReal(-1e300 * 1e300)), "-1e999");
  EXPECT_EQ(JsonValue(SqlText("\xc3\xa9")), "\"\xc3\xa9\"");
  EXPECT_EQ(JsonValue(SqlNull()), "null");
  EXPECT_EQ(JsonValue(SqlBlob(std::string("\0", 1))), "\"AA==\"");
  EXPECT_EQ(JsonValue(SqlBlob("abc")), "\"YWJj\"");
}

TEST(ResultWriterTest, TableStreamsOneHeaderAndCountsEveryPage) {
  auto w = MakeResultWriter(OutputFormat::kTable);
  const std::string t =
      Render(*w, {Page({{SqlInt(1), SqlText("a")}}, true), Page({{SqlInt(22), SqlBlob("\x01")}})});
  EXPECT_EQ(t,
            " id | v\n"
            "----+---\n"
            "  1 | a\n"
            " 22 | x'01'\n"  // wider than the first page: the column grows from here on
            "(2 rows)\n");
  EXPECT_EQ(Render(*w, {Page({})}), " id | v\n----+---\n(0 rows)\n");
  EXPECT_EQ(w->Write(WriteSummary{3, 0, 12}), "ok, 3 rows changed, seq 12\n");
  // One page renders as RenderTable always did.
  const auto one = Page({{SqlInt(5), SqlText("xyz")}});
  EXPECT_EQ(Render(*w, {one}), RenderReadResponse(one));
}

}  // namespace
}  // namespace vsc::client

#include "director/sql_http_codec.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "director/sql_http_json.h"

namespace vsc::director {
namespace {

std::vector<proto::SqlStatement> Parse(std::string_view body) {
  auto r = ParseSqlBody(body, false);
  EXPECT_TRUE(r.ok()) << body << ": " << r.status().ToString();
  return r.ok() ? *r : std::vector<proto::SqlStatement>{};
}

std::string Error(std::string_view body, const SqlBodyLimits& limits = {}) {
  auto r = ParseSqlBody(body, false, limits);
  EXPECT_FALSE(r.ok()) << body;
  return r.ok() ? "" : r.status().message();
}

TEST(SqlHttpCodecTest, EveryBodyFormOfTheRqliteApi) {
  auto s = Parse(R"j(["CREATE TABLE foo (id integer not null primary key, name text)",
                    ["INSERT INTO foo(name, age) VALUES(?, ?)", "fiona", 20],
                    ["INSERT INTO foo(name, age) VALUES(:name, :age)", {"age": 21, "name": "x"}],
                    ["SELECT 1"]])j");
  ASSERT_EQ(s.size(), 4u);
  EXPECT_EQ(s[0].params_size(), 0);
  ASSERT_EQ(s[1].params_size(), 2);
  EXPECT_EQ(s[1].params(0).text(), "fiona");
  EXPECT_EQ(s[1].params(1).integer(), 20);
  // Named parameters are bound in the order the statement names them, not the object's.
  ASSERT_EQ(s[2].params_size(), 2);
  EXPECT_EQ(s[2].params(0).text(), "x");
  EXPECT_EQ(s[2].params(1).integer(), 21);
  EXPECT_EQ(s[3].sql(), "SELECT 1");
  auto text = ParseSqlBody("SELECT * FROM foo", true);
  ASSERT_TRUE(text.ok());
  ASSERT_EQ(text->size(), 1u);
  EXPECT_EQ((*text)[0].sql(), "SELECT * FROM foo");
}

TEST(SqlHttpCodecTest, ParameterTypesFollowRqlite) {
  auto s = Parse(R"j([["X", 1, 1.5, true, false, null, "x'0aFF'", "plain", [1, 2, 255],
                    9223372036854775807, 18446744073709551615, 3.0]])j");
  ASSERT_EQ(s.size(), 1u);
  const auto& p = s[0].params();
  ASSERT_EQ(p.size(), 11);
  EXPECT_EQ(p[0].integer(), 1);
  EXPECT_EQ(p[1].real(), 1.5);
  EXPECT_EQ(p[2].integer(), 1);
  EXPECT_EQ(p[3].integer(), 0);
  EXPECT_EQ(p[4].value_case(), proto::SqlValue::kNull);
  EXPECT_EQ(p[5].blob(), std::string("\x0a\xff", 2));
  EXPECT_EQ(p[6].text(), "plain");
  EXPECT_EQ(p[7].blob(), std::string("\x01\x02\xff", 3));
  EXPECT_EQ(p[8].integer(), INT64_MAX);
  EXPECT_EQ(p[9].value_case(), proto::SqlValue::kReal);  // past int64: a float, as Go parses it
  EXPECT_EQ(p[10].value_case(), proto::SqlValue::kReal);
  EXPECT_EQ(p[10].real(), 3.0);
}

TEST(SqlHttpCodecTest, BadBodiesGetRqlitesMessages) {
  EXPECT_EQ(Error("[\"SELECT 1\""), "invalid JSON body");
  EXPECT_EQ(Error("{\"a\":1}"), "invalid request");
  EXPECT_EQ(Error("[1]"), "invalid request");
  EXPECT_EQ(Error("[[1, 2]]"), "invalid request");
  EXPECT_EQ(Error("[]"), "no statements");
  EXPECT_NE(Error(R"j([["SELECT :a", {"a": {"b": 1}}]])j").find("unsupported type"),
            std::string::npos);
  EXPECT_NE(Error(R"j([["X", [256]]])j").find("unsupported type"), std::string::npos);
  EXPECT_NE(Error(R"j([["X", [[1]]]])j").find("unsupported type"), std::string::npos);
  EXPECT_NE(Error(std::string(100, '[') + std::string(100, ']')), "");
  SqlBodyLimits two;
  two.max_statements = 2;
  EXPECT_NE(Error(R"j(["a", "b", "c"])j", two).find("too many statements (3); at most 2"),
            std::string::npos);
}

TEST(SqlHttpCodecTest, NamedParametersMustMatchTheStatement) {
  EXPECT_NE(Error(R"j([["SELECT :a, :b", {"a": 1}]])j").find("no value for parameter :b"),
            std::string::npos);
  EXPECT_NE(Error(R"j([["SELECT :a", {"a": 1, "zz": 2}]])j").find("unknown parameter \"zz\""),
            std::string::npos);
  EXPECT_NE(Error(R"j([["SELECT ?", {"a": 1}]])j").find("positional"), std::string::npos);
  auto s = Parse(R"j([["SELECT @a, $b, :a", {"b": 2, "a": 1}]])j");
  // @a, $b and :a are three parameters in SQLite; the object's "a" binds both @a and :a.
  ASSERT_EQ(s[0].params_size(), 3);
  EXPECT_EQ(s[0].params(0).integer(), 1);
  EXPECT_EQ(s[0].params(1).integer(), 2);
  EXPECT_EQ(s[0].params(2).integer(), 1);
}

TEST(SqlHttpCodecTest, EmptyStatementsAreSkipped) {
  auto s = Parse(R"j(["", "SELECT 1", [""]])j");
  ASSERT_EQ(s.size(), 1u);
}

TEST(SqlHttpCodecTest, ParameterSlotsNumberAsSqliteDoes) {
  auto slots = [](std::string_view sql) {
    auto r = ParameterSlots(sql);
    EXPECT_TRUE(r.ok()) << sql;
    return r.ok() ? *r : std::vector<std::string>{};
  };
  EXPECT_EQ(slots("SELECT ?, ?"), (std::vector<std::string>{"", ""}));
  EXPECT_EQ(slots("SELECT ?3, ?"), (std::vector<std::string>{"", "", "", ""}));
  EXPECT_EQ(slots("SELECT :a, ?, :a, @b"), (std::vector<std::string>{":a", "", "@b"}));
  EXPECT_EQ(slots("SELECT ':a', \"?\", [?x], `:y` -- :c\n /* ?4 */ , $d"),
            (std::vector<std::string>{"$d"}));
  EXPECT_EQ(slots("SELECT x$y, 'it''s :not'"), std::vector<std::string>{});
  EXPECT_FALSE(ParameterSlots("SELECT ?0").ok());
  EXPECT_FALSE(ParameterSlots("SELECT ?1000").ok());
  EXPECT_FALSE(ParameterSlots("SELECT ?99999999999999999999999").ok());
}

TEST(SqlHttpCodecTest, QueryStringFlagsArePresenceOnly) {
  QueryParams q = QueryParams::Parse("transaction=false&timings&q=SELECT%20*+FROM%20t&q=x&p=%zz");
  EXPECT_TRUE(q.Has("transaction"));
  EXPECT_TRUE(q.Has("timings"));
  EXPECT_EQ(q.Get("q"), "SELECT * FROM t");  // the first value wins
  EXPECT_EQ(q.Get("p"), "%zz");
  EXPECT_FALSE(q.Has("pretty"));
}

TEST(SqlHttpCodecTest, GoDurations) {
  EXPECT_EQ(*ParseGoDuration("2s"), 2'000'000);
  EXPECT_EQ(*ParseGoDuration("1m30s"), 90'000'000);
  EXPECT_EQ(*ParseGoDuration("300ms"), 300'000);
  EXPECT_EQ(*ParseGoDuration("1.5h"), 5'400'000'000);
  EXPECT_EQ(*ParseGoDuration("0"), 0);
  EXPECT_FALSE(ParseGoDuration("2").ok());
  EXPECT_FALSE(ParseGoDuration("abc").ok());
  EXPECT_FALSE(ParseGoDuration("").ok());
}

TEST(SqlHttpJsonTest, WriteResultsOmitZeroFields) {
  EXPECT_EQ(WriteResultJson({}, false), "{}");
  EXPECT_EQ(WriteResultJson({"", 1, 1}, false), R"j({"last_insert_id":1,"rows_affected":1})j");
  EXPECT_EQ(WriteResultJson({"", 0, 2}, false), R"j({"rows_affected":2})j");
  EXPECT_EQ(WriteResultJson({"", 99, 1}, true),
            R"j({"last_insert_id":99,"rows_affected":1,"rows":null})j");
  EXPECT_EQ(WriteResultJson({"boom \"x\"", 0, 0}, false), R"j({"error":"boom \"x\""})j");
  EXPECT_EQ(EnvelopeJson({}), R"j({"results":[]})j");
  EXPECT_EQ(EnvelopeJson({"{}"}, std::nullopt, std::nullopt, 7), R"j({"results":[{}],"seq":7})j");
}

proto::ReadResponse Page(std::vector<std::string> columns, std::vector<std::string> decl) {
  proto::ReadResponse p;
  for (auto& c : columns) p.add_columns(c);
  for (auto& d : decl) p.add_decltypes(d);
  return p;
}

TEST(SqlHttpJsonTest, RowsAsRqliteWritesThem) {
  proto::ReadResponse p = Page({"id", "name", "n", "b", "x"}, {"INTEGER", "TEXT", "", "blob", ""});
  proto::SqlRow* r = p.add_rows();
  r->add_values()->set_integer(1);
  r->add_values()->set_text("fiona\n");
  r->add_values()->set_real(3.0);
  r->add_values()->set_blob("\xde\xad\xbe\xef");
  r->add_values()->set_null(true);
  RowsEncoder enc(false);
  enc.AddPage(p);
  const std::string out = enc.Finish();
  EXPECT_EQ(out,
            R"j({"columns":["id","name","n","b","x"],"types":["integer","text","real","blob",""],)j"
            R"j("values":[[1,"fiona\n",3,"3q2+7w==",null]]})j");
  EXPECT_TRUE(nlohmann::json::accept(out));
  RowsEncoder empty(false);
  empty.AddPage(Page({"id"}, {"int"}));
  EXPECT_EQ(empty.Finish(), R"j({"columns":["id"],"types":["int"]})j");
}

TEST(SqlHttpJsonTest, AssociativeRowsHaveSortedKeys) {
  proto::ReadResponse p = Page({"name", "age", "id"}, {"text", "integer", "integer"});
  proto::SqlRow* r = p.add_rows();
  r->add_values()->set_text("fiona");
  r->add_values()->set_integer(20);
  r->add_values()->set_integer(1);
  RowsEncoder enc(true);
  enc.AddPage(p);
  EXPECT_EQ(enc.Finish(), R"j({"types":{"age":"integer","id":"integer","name":"text"},)j"
                          R"j("rows":[{"age":20,"id":1,"name":"fiona"}]})j");
  RowsEncoder none(true);
  none.AddPage(Page({"a"}, {""}));
  EXPECT_EQ(none.Finish(), R"j({"types":{"a":""},"rows":[]})j");
}

TEST(SqlHttpJsonTest, PagesAppendAndBase64RoundsEveryLength) {
  RowsEncoder enc(false);
  proto::ReadResponse first = Page({"v"}, {""});
  first.add_rows()->add_values()->set_integer(1);
  proto::ReadResponse second;
  second.add_rows()->add_values()->set_integer(2);
  enc.AddPage(first);
  enc.AddPage(second);
  EXPECT_EQ(enc.Finish(), R"j({"columns":["v"],"types":["integer"],"values":[[1],[2]]})j");
}

TEST(SqlHttpJsonTest, PrettyIndentsWithFourSpacesKeepingOrder) {
  EXPECT_EQ(PrettyJson(R"j({"results":[{"rows_affected":1,"last_insert_id":2}]})j"),
            "{\n    \"results\": [\n        {\n            \"rows_affected\": 1,\n"
            "            \"last_insert_id\": 2\n        }\n    ]\n}");
}

// rqlite's blob_array and qualify_columns: a BLOB as its byte values (an empty one as []), a
// table's column as table.column, an expression's name unchanged; associative keys follow.
TEST(SqlHttpJsonTest, BlobArrayAndQualifiedColumns) {
  proto::ReadResponse p = Page({"id", "b", "n"}, {"integer", "blob", ""});
  for (const char* t : {"foo", "foo", ""}) p.add_tables(t);
  proto::SqlRow* r = p.add_rows();
  r->add_values()->set_integer(2);
  r->add_values()->set_blob(std::string("\xde\xad\x00\xef", 4));
  r->add_values()->set_integer(4);
  proto::SqlRow* r2 = p.add_rows();
  r2->add_values()->set_integer(3);
  r2->add_values()->set_blob("");
  r2->add_values()->set_integer(0);
  RowsEncoder enc(RowsFormat{.blob_array = true, .qualify_columns = true});
  enc.AddPage(p);
  EXPECT_EQ(enc.Finish(), R"j({"columns":["foo.id","foo.b","n"],"types":["integer","blob",)j"
                          R"j("integer"],"values":[[2,[222,173,0,239],4],[3,[],0]]})j");
  RowsEncoder plain(RowsFormat{});
  plain.AddPage(p);
  EXPECT_EQ(plain.Finish(), R"j({"columns":["id","b","n"],"types":["integer","blob",)j"
                            R"j("integer"],"values":[[2,"3q0A7w==",4],[3,"",0]]})j");
  RowsEncoder assoc(RowsFormat{.associative = true, .qualify_columns = true});
  assoc.AddPage(p);
  EXPECT_EQ(assoc.Finish(), R"j({"types":{"foo.b":"blob","foo.id":"integer","n":"integer"},)j"
                            R"j("rows":[{"foo.b":"3q0A7w==","foo.id":2,"n":4},)j"
                            R"j({"foo.b":"","foo.id":3,"n":0}]})j");
}

}  // namespace
}  // namespace vsc::director

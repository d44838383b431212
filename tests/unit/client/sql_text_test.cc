#include "client/sql_text.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "client/table_printer.h"
#include "common/random.h"

namespace vsc::client {
namespace {

std::vector<std::string> SplitAll(const std::string& text, const std::vector<size_t>& cuts) {
  SqlSplitter s;
  std::vector<std::string> out;
  size_t prev = 0;
  for (size_t c : cuts) {
    s.Feed(std::string_view(text).substr(prev, c - prev));
    while (auto st = s.Next()) out.push_back(*st);
    prev = c;
  }
  s.Feed(std::string_view(text).substr(prev));
  while (auto st = s.Next()) out.push_back(*st);
  return out;
}

// Statements whose quotes and comments hold ';' and comment starters.
const std::vector<std::string> kStatements = {
    "SELECT 1",
    "SELECT 'a;b' AS x",
    "INSERT INTO t VALUES('it''s; fine', \"q;\")",
    "SELECT `we;ird` FROM [br;acket]",
    "SELECT 1 -- trailing; comment\n  + 2",
    "SELECT /* inner; comment */ 3",
    "UPDATE t SET a = a - 1 WHERE b / 2 > 1",
    "DELETE FROM t WHERE x = '--not a comment'",
};

TEST(SqlSplitterTest, SameStatementsWhateverTheSplits) {
  std::string text;
  for (const auto& s : kStatements) text += s + ";\n";
  Random rng(7);
  for (int round = 0; round < 2000; ++round) {
    std::vector<size_t> cuts;
    const size_t step = round < 50 ? static_cast<size_t>(round % 10 + 1) : 0;
    if (step > 0) {
      for (size_t c = step; c < text.size(); c += step) cuts.push_back(c);
    } else {
      for (size_t c = 0; c < text.size(); c += 1 + rng.Uniform(12)) {
        if (c > 0) cuts.push_back(c);
      }
    }
    ASSERT_EQ(SplitAll(text, cuts), kStatements) << "round " << round;
  }
}

TEST(SqlSplitterTest, SkipsEmptyAndCommentOnlyStatementsAndKeepsTheRest) {
  SqlSplitter s;
  s.Feed(";; -- only a comment;\n /* and; this */ ; SELECT 2; SELECT");
  EXPECT_EQ(s.Next(), "SELECT 2");
  EXPECT_FALSE(s.Next().has_value());
  EXPECT_TRUE(s.pending());
  s.Feed(" 3");
  EXPECT_EQ(s.TakeRest(), "SELECT 3");
  EXPECT_FALSE(s.pending());
  s.Feed("-- just a comment\n");
  EXPECT_FALSE(s.pending());
  EXPECT_EQ(s.TakeRest(), "");
}

TEST(SqlTextTest, TellsReadsFromWrites) {
  for (const char* r : {"SELECT 1", "  select * from resources", "VALUES(1)", "EXPLAIN SELECT 1",
                        "WITH x AS (SELECT 1) SELECT * FROM x", "PRAGMA table_info(resources)",
                        "/* c */ SELECT 1", "-- c\nSELECT 1"}) {
    EXPECT_TRUE(IsReadStatement(r)) << r;
  }
  for (const char* w : {"INSERT INTO t VALUES(1)", "update t set a=1", "DELETE FROM t",
                        "REPLACE INTO t VALUES(1)", "CREATE TABLE t(a)", "DROP TABLE t",
                        "WITH x AS (SELECT 1) INSERT INTO t SELECT * FROM x",
                        "PRAGMA user_version = 3", "", "-- nothing"}) {
    EXPECT_FALSE(IsReadStatement(w)) << w;
  }
  // Keywords inside quotes do not count.
  EXPECT_TRUE(IsReadStatement("WITH x AS (SELECT 'DELETE') SELECT * FROM x"));
}

TEST(SqlTextTest, FormatsEveryStorageClass) {
  proto::SqlValue v;
  EXPECT_EQ(FormatValue(v), "NULL");
  v.set_null(true);
  EXPECT_EQ(FormatValue(v), "NULL");
  v.set_integer(-42);
  EXPECT_EQ(FormatValue(v), "-42");
  v.set_real(2.0);
  EXPECT_EQ(FormatValue(v), "2.0");
  v.set_real(0.1);
  EXPECT_EQ(FormatValue(v), "0.1");
  v.set_text("héllo");
  EXPECT_EQ(FormatValue(v), "héllo");
  v.set_blob(std::string("\x00\xff", 2));
  EXPECT_EQ(FormatValue(v), "x'00ff'");
}

TEST(SqlTextTest, RealsReadBackEqual) {
  Random rng(3);
  for (int i = 0; i < 5000; ++i) {
    const double d = (rng.NextDouble() - 0.5) * std::pow(10.0, static_cast<int>(rng.Uniform(40)) - 20);
    proto::SqlValue v;
    v.set_real(d);
    EXPECT_EQ(std::stod(FormatValue(v)), d);
  }
}

TEST(TablePrinterTest, RendersLikePsql) {
  const std::string t = RenderTable({"id", "node"}, {{{"1", true}, {"node-01", false}},
                                                     {{"22", true}, {"n", false}}});
  EXPECT_EQ(t,
            " id |  node  \n"
            "----+---------\n"
            "  1 | node-01\n"
            " 22 | n      \n"
            "(2 rows)\n");
  EXPECT_EQ(RenderTable({"x"}, {}), " x\n---\n(0 rows)\n");
}

TEST(TablePrinterTest, EveryLineHasTheSameWidth) {
  Random rng(5);
  const std::vector<std::string> pieces = {"a", "é", "日本", "\n", "\t", "\x01", "long text ", ""};
  for (int round = 0; round < 500; ++round) {
    const size_t cols = 1 + rng.Uniform(5);
    std::vector<std::string> names;
    for (size_t c = 0; c < cols; ++c) names.push_back(pieces[rng.Uniform(pieces.size())] + "c");
    std::vector<std::vector<Cell>> rows(rng.Uniform(6));
    for (auto& r : rows) {
      for (size_t c = 0; c < cols; ++c) {
        std::string s;
        for (size_t k = rng.Uniform(4); k > 0; --k) s += pieces[rng.Uniform(pieces.size())];
        r.push_back(Cell{s, rng.Uniform(2) == 0});
      }
    }
    const std::string t = RenderTable(names, rows);
    std::vector<std::string> lines;
    size_t start = 0;
    for (size_t nl = t.find('\n'); nl != std::string::npos; nl = t.find('\n', start)) {
      lines.push_back(t.substr(start, nl - start));
      start = nl + 1;
    }
    ASSERT_EQ(lines.size(), rows.size() + 3);  // header, rule, rows, footer
    const size_t width = DisplayWidth(lines[1]);
    for (size_t i = 0; i + 1 < lines.size(); ++i) {
      // The header may end in centring blanks; every line spans the rule.
      EXPECT_EQ(DisplayWidth(lines[i]), i == 1 ? width : width - 1) << t;
    }
  }
}

}  // namespace
}  // namespace vsc::client

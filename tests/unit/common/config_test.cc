#include "common/config.h"

#include <gtest/gtest.h>

namespace vsc {
namespace {

struct Cfg {
  std::string host = "127.0.0.1";
  uint16_t port = 7000;
  uint32_t silent_after = 2;
  double ref_ms = 700;
  uint32_t timeout_ms = 500;
  uint32_t persistence_s = 0;
  bool insecure = false;
  ConfigTable table{"director"};
  Cfg() {
    table.Bind("host", &host, "address to bind");
    table.Bind("port", &port, "port");
    table.Bind("silent_after", &silent_after, "missed heartbeats before SILENT");
    table.Bind("ref_ms", &ref_ms, "dwlc reference");
    table.Bind("insecure", &insecure, "run without a key");
    table.Bind("timeout_ms", &timeout_ms, "a timeout");
    table.Bind("persistence_s", &persistence_s, "persistence");
  }
};

Status Parse(Cfg& c, std::vector<std::string> args) {
  CLI::App app;
  c.table.AddFlags(app);
  std::vector<std::string> rev(args.rbegin(), args.rend());
  app.parse(rev);
  return c.table.Finish();
}

TEST(ConfigTest, DefaultsThenFileThenFlags) {
  Cfg c;
  ASSERT_TRUE(
      c.table
          .LoadTomlText("[director]\nport = 8000\nsilent_after = 3\ninsecure = true\n", "test.toml")
          .ok());
  EXPECT_EQ(c.port, 8000);
  EXPECT_EQ(c.silent_after, 3u);
  EXPECT_TRUE(c.insecure);
  ASSERT_TRUE(Parse(c, {"--port", "9000", "--ref-ms", "650.5"}).ok());
  EXPECT_EQ(c.port, 9000);        // flag wins over the file
  EXPECT_EQ(c.silent_after, 3u);  // file value kept
  EXPECT_DOUBLE_EQ(c.ref_ms, 650.5);
  EXPECT_EQ(c.host, "127.0.0.1");  // default kept
}

TEST(ConfigTest, AListIsARepeatableFlagAndATomlArray) {
  std::vector<std::string> service = {"default"};
  uint16_t port = 1;
  ConfigTable table{"realserver"};
  table.Bind("service", &service, "a fronted service");
  table.Bind("port", &port, "port");
  ASSERT_TRUE(
      table.LoadTomlText("[realserver]\nservice = [\"a=tcp:1.2.3.4:80\", \"b\"]\n", "t").ok());
  EXPECT_EQ(service, (std::vector<std::string>{"a=tcp:1.2.3.4:80", "b"}));
  const std::string printed = table.ToToml();
  EXPECT_NE(printed.find("service = [\"a=tcp:1.2.3.4:80\", \"b\"]"), std::string::npos) << printed;
  Status scalar = table.LoadTomlText("service = 3\n", "t");
  EXPECT_FALSE(scalar.ok());
  EXPECT_NE(scalar.message().find("array of strings"), std::string::npos) << scalar.message();
  EXPECT_FALSE(table.LoadTomlText("service = [\"x\", 4]\n", "t").ok());
  CLI::App app;
  table.AddFlags(app);
  std::vector<std::string> args = {"--service", "x=tcp:1.1.1.1:1", "--port",
                                   "9",         "--service",       "y=udp:2.2.2.2:2"};
  std::vector<std::string> rev(args.rbegin(), args.rend());
  app.parse(rev);
  ASSERT_TRUE(table.Finish().ok());
  EXPECT_EQ(service, (std::vector<std::string>{"x=tcp:1.1.1.1:1", "y=udp:2.2.2.2:2"}));  // replaced
  EXPECT_EQ(port, 9);
}

TEST(ConfigTest, TopLevelKeysAreAccepted) {
  Cfg c;
  ASSERT_TRUE(c.table.LoadTomlText("port = 1234\n", "t").ok());
  EXPECT_EQ(c.port, 1234);
}

TEST(ConfigTest, ErrorsAreClear) {
  Cfg c;
  Status unknown = c.table.LoadTomlText("[director]\nprot = 1\n", "x.toml");
  EXPECT_FALSE(unknown.ok());
  EXPECT_NE(unknown.message().find("unknown key 'prot'"), std::string::npos);
  Status range = c.table.LoadTomlText("port = 70000\n", "x.toml");
  EXPECT_FALSE(range.ok());
  EXPECT_NE(range.message().find("out of range"), std::string::npos);
  Status syntax = c.table.LoadTomlText("port = = 1\n", "x.toml");
  EXPECT_FALSE(syntax.ok());
  EXPECT_NE(syntax.message().find("x.toml:1"), std::string::npos);
  Cfg d;
  Status flag = Parse(d, {"--insecure", "maybe"});
  EXPECT_FALSE(flag.ok());
  EXPECT_NE(flag.message().find("not true or false"), std::string::npos);
}

TEST(ConfigTest, PrintedConfigLoadsBackToTheSameValues) {
  Cfg a;
  a.host = "10.0.0.1 \"quoted\"";
  a.port = 4242;
  a.ref_ms = 123.25;
  a.insecure = true;
  std::string text = a.table.ToToml();
  Cfg b;
  ASSERT_TRUE(b.table.LoadTomlText(text, "printed").ok()) << text;
  EXPECT_EQ(b.host, a.host);
  EXPECT_EQ(b.port, 4242);
  EXPECT_DOUBLE_EQ(b.ref_ms, 123.25);
  EXPECT_TRUE(b.insecure);
}

// Found by config_fuzz: `d = 0x7fffffffffffffff` loads as the double 2^63, which printed as
// "9223372036854775808", an integer TOML cannot hold, so --print-config did not load back.
TEST(ConfigTest, WholeNumberFloatsPrintAsTomlFloats) {
  for (double v : {9223372036854775808.0, 1e20, 2.0, -3.0, 0.0}) {
    Cfg a;
    a.ref_ms = v;
    const std::string text = a.table.ToToml();
    Cfg b;
    ASSERT_TRUE(b.table.LoadTomlText(text, "printed").ok()) << text;
    EXPECT_EQ(b.ref_ms, v) << text;
  }
  Cfg c;
  ASSERT_TRUE(c.table.LoadTomlText("ref_ms = 0x7fffffffffffffff\n", "t").ok());
  Cfg d;
  ASSERT_TRUE(d.table.LoadTomlText(c.table.ToToml(), "printed").ok()) << c.table.ToToml();
  EXPECT_EQ(d.ref_ms, c.ref_ms);
}

TEST(ConfigTest, ABooleanFlagMayStandAloneOrTakeAValue) {
  Cfg bare;
  ASSERT_TRUE(Parse(bare, {"--insecure"}).ok());
  EXPECT_TRUE(bare.insecure);
  Cfg valued;
  ASSERT_TRUE(Parse(valued, {"--insecure"}).ok());
  EXPECT_TRUE(valued.insecure);
  Cfg off;
  off.insecure = true;
  ASSERT_TRUE(Parse(off, {"--insecure", "false"}).ok());
  EXPECT_FALSE(off.insecure);
  Cfg eq;
  ASSERT_TRUE(Parse(eq, {"--insecure=off", "--port", "1"}).ok());
  EXPECT_FALSE(eq.insecure);
  EXPECT_EQ(eq.port, 1);
}

TEST(ConfigTest, DurationKeysTakeAUnit) {
  Cfg c;
  ASSERT_TRUE(Parse(c, {"--timeout-ms", "2s", "--persistence-s", "5m"}).ok());
  EXPECT_EQ(c.timeout_ms, 2000u);
  EXPECT_EQ(c.persistence_s, 300u);
  Cfg bare;
  ASSERT_TRUE(Parse(bare, {"--timeout-ms", "250", "--persistence-s", "360"}).ok());
  EXPECT_EQ(bare.timeout_ms, 250u);
  EXPECT_EQ(bare.persistence_s, 360u);
  Cfg file;
  ASSERT_TRUE(file.table.LoadTomlText("timeout_ms = \"1.5s\"\n", "t").ok());
  EXPECT_EQ(file.timeout_ms, 1500u);
  Cfg bad;
  Status s = Parse(bad, {"--persistence-s", "1500ms"});
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("whole number of seconds"), std::string::npos) << s.message();
  Cfg bad2;
  Status s2 = Parse(bad2, {"--timeout-ms", "2 hours"});
  EXPECT_FALSE(s2.ok());
}

TEST(ConfigTest, HelpShowsTypesAndDefaults) {
  Cfg c;
  CLI::App app;
  c.table.AddFlags(app);
  const std::string help = app.help();
  EXPECT_NE(help.find("--port UINT=7000"), std::string::npos) << help;
  EXPECT_NE(help.find("--host TEXT=127.0.0.1"), std::string::npos) << help;
  EXPECT_NE(help.find("--timeout-ms MS=500"), std::string::npos) << help;
  EXPECT_NE(help.find("--insecure [BOOL]=false"), std::string::npos) << help;
  EXPECT_NE(help.find("--ref-ms"), std::string::npos) << help;
}

// Found by config_fuzz: floats were read and printed with 6 significant digits.
TEST(ConfigTest, FloatsLoadAndPrintExactly) {
  Cfg a;
  ASSERT_TRUE(a.table.LoadTomlText("ref_ms = 0.123456789012345\n", "t").ok());
  EXPECT_EQ(a.ref_ms, 0.123456789012345);
  a.ref_ms = 1e300;
  Cfg b;
  ASSERT_TRUE(b.table.LoadTomlText(a.table.ToToml(), "printed").ok());
  EXPECT_EQ(b.ref_ms, 1e300);
}

// Found by config_fuzz: a string holding a newline or another control character was printed
// raw, which is not TOML, so --print-config output did not load back.
TEST(ConfigTest, PrintedStringsWithControlCharactersLoadBack) {
  Cfg a;
  a.host = "line\nnext\ttab\r\x01\x7f\"\\";
  Cfg b;
  const std::string text = a.table.ToToml();
  ASSERT_TRUE(b.table.LoadTomlText(text, "printed").ok()) << text;
  EXPECT_EQ(b.host, a.host);
}

// Found by config_fuzz: with a [director] section present, top-level keys were skipped silently.
TEST(ConfigTest, TopLevelKeysBesideTheSectionAreApplied) {
  Cfg c;
  ASSERT_TRUE(c.table.LoadTomlText("port = 8100\n[director]\nsilent_after = 4\n", "t").ok());
  EXPECT_EQ(c.port, 8100);
  EXPECT_EQ(c.silent_after, 4u);
  Cfg twice;
  Status s = twice.table.LoadTomlText("port = 1\n[director]\nport = 2\n", "t");
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("set both at the top level and under [director]"), std::string::npos)
      << s.message();
}

}  // namespace
}  // namespace vsc

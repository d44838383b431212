// The command-line conventions (docs/operations.md "Command line"), checked on the real binary:
// `--director HOST` with port options named after the director's keys, the older spellings
// still accepted, options after the subcommand, `--json [FILE]`, boolean flags with or without
// a value, durations with units, typed `--help` with defaults, and no internal jargon in help.
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "common/subprocess.h"
#include "integration/cluster_harness.h"

namespace vsc::integration {
namespace {

using namespace std::chrono_literals;
using json = nlohmann::json;

struct CliRun {
  int code = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};

// Runs `vsc args...` to completion with stdout and stderr kept apart.
CliRun Vsc(const std::string& dir, const std::vector<std::string>& args) {
  static int runs = 0;
  const std::string base = dir + "/cli-" + std::to_string(++runs);
  std::string cmd = std::string(VSC_BINARY);
  for (const auto& a : args) cmd += " '" + a + "'";
  cmd += " >" + base + ".out 2>" + base + ".err";
  const int status = std::system(cmd.c_str());
  CliRun r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = ReadFile(base + ".out");
  r.err = ReadFile(base + ".err");
  return r;
}

bool Has(const std::string& text, const std::string& what) {
  return text.find(what) != std::string::npos;
}

TEST_F(ClusterTest, AdmTakesTheDirectorHostPortOptionsAndTheOlderSpelling) {
  ASSERT_NO_FATAL_FAILURE(StartCluster());
  const std::string token = work_dir_ + "/director-admin.token";
  const std::string port = std::to_string(cluster_->admin_port());

  // --director HOST --admin-port P before the subcommand, JSON on stdout in place of the table.
  CliRun j = Vsc(work_dir_, {"adm", "--director", "127.0.0.1", "--admin-port", port, "--token-file",
                             token, "list", "--json"});
  ASSERT_EQ(j.code, 0) << j.out << j.err;
  const json status = json::parse(j.out, nullptr, false);
  ASSERT_FALSE(status.is_discarded()) << j.out;
  EXPECT_EQ(status.at("services").size(), 2u);
  EXPECT_FALSE(Has(j.out, "Prot LocalAddress")) << "--json alone replaces the table";

  // The parent's options after the subcommand, in the older --admin HOST:PORT spelling.
  CliRun old =
      Vsc(work_dir_, {"adm", "list", "--admin", "127.0.0.1:" + port, "--token-file", token});
  ASSERT_EQ(old.code, 0) << old.out << old.err;
  EXPECT_TRUE(Has(old.out, "Prot LocalAddress:Port Scheduler Flags")) << old.out;

  // --json FILE writes the file and keeps the table on stdout.
  const std::string file = work_dir_ + "/status.json";
  CliRun both = Vsc(work_dir_, {"adm", "list", "--director", "127.0.0.1", "--admin-port", port,
                                "--token-file", token, "--json", file});
  ASSERT_EQ(both.code, 0) << both.out << both.err;
  EXPECT_TRUE(Has(both.out, "Prot LocalAddress:Port Scheduler Flags")) << both.out;
  const json from_file = json::parse(ReadFile(file), nullptr, false);
  ASSERT_FALSE(from_file.is_discarded());
  EXPECT_EQ(from_file.at("services").size(), 2u);

  // A wrong port is named in the error.
  CliRun wrong = Vsc(work_dir_, {"adm", "list", "--director", "127.0.0.1", "--admin-port", "1",
                                 "--token-file", token});
  EXPECT_EQ(wrong.code, 1) << wrong.out << wrong.err;
  EXPECT_TRUE(Has(wrong.err, "127.0.0.1:1")) << wrong.err;
}

TEST(CliTest, BooleanFlagsStandAloneOrTakeAValueOnDaemonsAndClients) {
  const std::string dir = MakeTempDir("vsc-cli");
  CliRun bare = Vsc(dir, {"director", "--insecure", "--print-config"});
  ASSERT_EQ(bare.code, 0) << bare.err;
  EXPECT_TRUE(Has(bare.out, "insecure = true")) << bare.out;
  CliRun valued = Vsc(dir, {"director", "--insecure", "false", "--print-config"});
  ASSERT_EQ(valued.code, 0) << valued.err;
  EXPECT_TRUE(Has(valued.out, "insecure = false")) << valued.out;
  CliRun rs = Vsc(dir, {"realserver", "--id", "x", "--insecure", "--director", "10.1.2.3",
                        "--director", "10.1.2.4:7600", "--control-port", "7555", "--print-config"});
  ASSERT_EQ(rs.code, 0) << rs.err;
  EXPECT_TRUE(Has(rs.out, "insecure = true")) << rs.out;
  // `director` is a list: one entry per --director, in their order.
  EXPECT_TRUE(Has(rs.out, "director = [\"10.1.2.3\", \"10.1.2.4:7600\"]")) << rs.out;
  EXPECT_TRUE(Has(rs.out, "control_port = 7555")) << rs.out;
  // Clients: `--insecure true` (the daemons' older spelling) parses as well as `--insecure`;
  // the bad --ids value then stops the run before anything is sent.
  CliRun client = Vsc(dir, {"bench", "write", "--target", "tcp://127.0.0.1:1", "--insecure",
                            "--op", "bogus"});
  EXPECT_EQ(client.code, 2) << client.err;
  EXPECT_TRUE(Has(client.err, "bogus")) << client.err;
  CliRun nonsense = Vsc(dir, {"director", "--insecure", "maybe", "--print-config"});
  EXPECT_NE(nonsense.code, 0);
  EXPECT_TRUE(Has(nonsense.err, "not true or false")) << nonsense.err;
}

TEST(CliTest, DurationsTakeUnitsAndBadOnesAreNamed) {
  const std::string dir = MakeTempDir("vsc-cli");
  CliRun ms = Vsc(dir, {"director", "--heartbeat-interval-ms", "1s", "--print-config"});
  ASSERT_EQ(ms.code, 0) << ms.err;
  EXPECT_TRUE(Has(ms.out, "heartbeat_interval_ms = 1000")) << ms.out;
  CliRun bad = Vsc(dir, {"adm", "verify", "--timeout-ms", "soon"});
  EXPECT_NE(bad.code, 0);
  EXPECT_TRUE(Has(bad.err, "'soon' is not a duration")) << bad.err;
}

TEST(CliTest, HelpShowsTypesAndDefaultsAndNoJargon) {
  const std::string dir = MakeTempDir("vsc-cli");
  CliRun d = Vsc(dir, {"director", "--help"});
  ASSERT_EQ(d.code, 0) << d.err;
  EXPECT_TRUE(Has(d.out, "--lookup-port UINT=7000")) << d.out;
  EXPECT_TRUE(Has(d.out, "--heartbeat-interval-ms MS=200")) << d.out;
  EXPECT_TRUE(Has(d.out, "--scheduler TEXT=wlc")) << d.out;
  EXPECT_TRUE(Has(d.out, "--insecure [BOOL]=false")) << d.out;
  CliRun r = Vsc(dir, {"realserver", "--help"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(Has(r.out, "--control-port UINT=7100")) << r.out;
  std::string all;
  for (std::vector<std::string> args : {std::vector<std::string>{"--help"},
                                        {"director", "--help"},
                                        {"realserver", "--help"},
                                        {"adm", "--help"},
                                        {"bench", "--help"},
                                        {"bench", "lookup", "--help"},
                                        {"bench", "write", "--help"},
                                        {"loaddb", "--help"},
                                        {"demo", "--help"},
                                        {"sql", "--help"}}) {
    CliRun h = Vsc(dir, args);
    EXPECT_EQ(h.code, 0) << args[0] << ": " << h.err;
    all += h.out;
  }
  for (const char* jargon : {"paper", "seed 0", "the seed", "CG-tree", "CG tree"}) {
    EXPECT_FALSE(Has(all, jargon)) << "help mentions '" << jargon << "'";
  }
}

}  // namespace
}  // namespace vsc::integration

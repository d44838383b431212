#include "vservice/ipvsadm_rules.h"

#include <gtest/gtest.h>

#include "vservice_test_util.h"

namespace vsc::vservice {
namespace {

using namespace vservice::testing;

VirtualServiceTable Restored(std::string_view text) {
  VirtualServiceTable table;
  auto changes = RestoreRules(table, text);
  EXPECT_TRUE(changes.ok()) << changes.status().ToString();
  return table;
}

std::string RestoreError(std::string_view text) {
  VirtualServiceTable table;
  auto changes = RestoreRules(table, text);
  EXPECT_FALSE(changes.ok()) << text;
  EXPECT_TRUE(table.services().empty()) << "a failed restore changed the table";
  return changes.ok() ? "" : changes.status().message();
}

// ipvsadm's save lines (shared/reference/virtual_services.md §1.2, built from ipvsadm.c's format
// strings) that vsc can serve: they restore and save back byte for byte.
constexpr std::string_view kIpvsadmSample =
    "-A -t 10.0.0.1:80 -s wlc\n"
    "-a -t 10.0.0.1:80 -r 192.168.1.11:80 -m -w 1\n"
    "-a -t 10.0.0.1:80 -r 192.168.1.12:8080 -m -w 3\n"
    "-A -u 10.0.0.1:53 -s rr -o\n"
    "-a -u 10.0.0.1:53 -r 192.168.1.21:53 -m -w 1\n"
    "-A -t [2001:db8::80]:80 -s rr\n"
    "-a -t [2001:db8::80]:80 -r [2001:db8::a0a0]:80 -m -w 1\n";

TEST(IpvsadmRules, IpvsadmSampleRestoresAndSavesIdentically) {
  const VirtualServiceTable t = Restored(kIpvsadmSample);
  EXPECT_EQ(t.services().size(), 3u);
  const VirtualService* web = t.Find(Key("tcp", "10.0.0.1:80"));
  ASSERT_NE(web, nullptr);
  EXPECT_EQ(web->dests.at(Ap("192.168.1.12:8080")).weight, 3u);
  EXPECT_EQ(web->dests.at(Ap("192.168.1.12:8080")).method, Method::kNat);
  EXPECT_TRUE(t.Find(Key("udp", "10.0.0.1:53"))->config.one_packet);
  EXPECT_EQ(SaveRules(t), kIpvsadmSample);
}

// ipvsadm(8), "EXAMPLE 1 - Simple Virtual Service": the input it pipes into `ipvsadm -R`.
// ipvsadm -S -n prints the same rules with the default weight written out.
TEST(IpvsadmRules, ManPageExampleOneRestores) {
  std::string input = "\n";
  std::string saved = "-A -t 207.175.44.110:80 -s rr\n";
  input += saved;
  for (int i = 1; i <= 5; ++i) {
    const std::string line =
        "-a -t 207.175.44.110:80 -r 192.168.10." + std::to_string(i) + ":80 -m";
    input += line + "\n";
    saved += line + " -w 1\n";
  }
  const VirtualServiceTable t = Restored(input);
  EXPECT_EQ(t.Find(Key("tcp", "207.175.44.110:80"))->dests.size(), 5u);
  EXPECT_EQ(SaveRules(t), saved);
}

TEST(IpvsadmRules, SaveFormatIsIpvsadms) {
  VirtualServiceTable t;
  const ServiceKey web = Key("tcp", "10.0.0.1:80");
  const ServiceKey dns = Key("udp", "10.0.0.1:53");
  const ServiceKey v6 = Key("udp", "[2001:db8::1]:53");
  ServiceConfig sticky;
  sticky.scheduler = "sh";
  sticky.persistence = Persistence{360, 24};
  ASSERT_TRUE(t.AddService(dns, sticky).ok());
  ServiceConfig v6c;
  v6c.scheduler = "mh";
  v6c.persistence = Persistence{600, 64};
  v6c.one_packet = true;
  ASSERT_TRUE(t.AddService(v6, v6c).ok());
  ServiceConfig host_mask;
  host_mask.persistence = Persistence{300, 32};
  ASSERT_TRUE(t.AddService(web, host_mask).ok());
  DestConfig dr;
  dr.method = Method::kDr;
  dr.weight = 0;
  ASSERT_TRUE(t.AddDest(dns, Ap("10.0.1.2:9000"), dr).ok());
  ASSERT_TRUE(t.AddDest(dns, Ap("10.0.1.1:9001"), DestConfig{}).ok());
  ASSERT_TRUE(t.AddDest(dns, Ap("10.0.1.1:9000"), DestConfig{}).ok());
  DestConfig limited;
  limited.u_threshold = 100;
  limited.l_threshold = 50;
  ASSERT_TRUE(t.AddDest(web, Ap("10.0.1.1:8080"), limited).ok());
  // Services by family, protocol, address, port; destinations by address, then port; the host
  // mask is not printed; thresholds follow the weight.
  EXPECT_EQ(SaveRules(t),
            "-A -t 10.0.0.1:80 -s wlc -p 300\n"
            "-a -t 10.0.0.1:80 -r 10.0.1.1:8080 -m -w 1 -x 100 -y 50\n"
            "-A -u 10.0.0.1:53 -s sh -p 360 -M 255.255.255.0\n"
            "-a -u 10.0.0.1:53 -r 10.0.1.1:9000 -m -w 1\n"
            "-a -u 10.0.0.1:53 -r 10.0.1.1:9001 -m -w 1\n"
            "-a -u 10.0.0.1:53 -r 10.0.1.2:9000 -g -w 0\n"
            "-A -u [2001:db8::1]:53 -s mh -p 600 -M 64 -o\n");
  EXPECT_EQ(SaveRules(VirtualServiceTable()), "");
}

TEST(IpvsadmRules, ReadsCommentsBlankLinesAndTheIpvsadmWord) {
  const VirtualServiceTable t = Restored(
      "# saved by ipvsadm-save\n"
      "\n"
      "ipvsadm -A -t 192.168.109.128:80 -s wlc -p 300   # sticky web\n"
      "   \t\r\n"
      "ipvsadm -a -t 192.168.109.128:80 -r 192.168.126.131:80 -m -w 1\r\n"
      "-a -t 192.168.109.128:80 -r 192.168.126.132:80 -w 20 -m");  // no final newline
  const VirtualService* s = t.Find(Key("tcp", "192.168.109.128:80"));
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->config.persistence, (Persistence{300, 32}));
  EXPECT_EQ(s->dests.size(), 2u);
  EXPECT_EQ(s->dests.at(Ap("192.168.126.132:80")).weight, 20u);
}

TEST(IpvsadmRules, OperatorScriptsApplyInOrder) {
  // Commands as operators' scripts write them (edits and deletes included).
  const VirtualServiceTable t = Restored(
      "-C\n"
      "-A -t 192.168.1.100:80 -s wrr\n"
      "-a -t 192.168.1.100:80 -r 10.0.0.101:80 -w 10 -m\n"
      "-a -t 192.168.1.100:80 -r 10.0.0.102:80 -w 20 -m\n"
      "-e -t 192.168.1.100:80 -r 10.0.0.102:80 -w 5 -m\n"
      "-d -t 192.168.1.100:80 -r 10.0.0.101:80\n"
      "-E -t 192.168.1.100:80 -s lc\n");
  EXPECT_EQ(SaveRules(t),
            "-A -t 192.168.1.100:80 -s lc\n"
            "-a -t 192.168.1.100:80 -r 10.0.0.102:80 -m -w 5\n");
}

TEST(IpvsadmRules, ErrorsNameTheLineAndChangeNothing) {
  EXPECT_EQ(RestoreError("-A -t 10.0.0.1:80 -s rr\n"
                         "\n"
                         "-a -t 10.0.0.2:80 -r 10.0.1.1:80 -m\n"),
            "line 3: Service not defined: TCP 10.0.0.2:80; add the service with -A first");
  ExpectPrefix(RestoreError("-A -t 10.0.0.1:80\n-A -t 10.0.0.1:80 -s rr\n"),
               "line 2: Service already exists");
  ExpectPrefix(RestoreError("-A -t 10.0.0.1:80\n-a -t 10.0.0.1:80 -r 10.0.1.1 -w 70000\n"),
               "line 2: illegal weight specified");
  ExpectPrefix(RestoreError("-A -t 10.0.0.1:80 -s bogus\n"),
               "line 1: Scheduler or persistence engine not found");
  ExpectPrefix(RestoreError("-A -t 10.0.0.1:80\n-L -n\n"), "line 2: the 'list' command does");
  ExpectPrefix(RestoreError("-R\n"), "line 1: the 'restore' command does");

  VirtualServiceTable table = Restored("-A -u 10.0.0.1:53 -s rr\n");
  const VirtualServiceTable before = table;
  EXPECT_FALSE(RestoreRules(table, "-a -u 10.0.0.1:53 -r 10.0.1.1 -g\n-D -u 10.0.0.9:53\n").ok());
  EXPECT_EQ(table, before) << "the first line applied although the second failed";
}

TEST(IpvsadmRules, IpvsadmLinesVscCannotServeAreRefusedClearly) {
  // From the same ipvsadm sample: scheduler flags, TCP direct routing, firewall marks.
  EXPECT_NE(RestoreError("-A -t 10.0.0.1:443 -s sh -p 360 -M 255.255.255.0 -b sh-fallback,sh-port")
                .find("line 1: -b (scheduler flags)"),
            std::string::npos);
  EXPECT_NE(RestoreError("-A -t 10.0.0.1:443 -s sh\n-a -t 10.0.0.1:443 -r 192.168.1.11:443 -g -w 1")
                .find("line 2: direct return (-g) is not possible for TCP"),
            std::string::npos);
  EXPECT_NE(RestoreError("-A -f 1 -s rr").find("line 1: -f (firewall-mark services)"),
            std::string::npos);
}

TEST(IpvsadmRules, EditKeepsWhatIpvsadmCannotExpress) {
  VirtualServiceTable t = Restored("-A -t 10.0.0.1:80\n-a -t 10.0.0.1:80 -r 10.0.1.1:80\n");
  const ServiceKey key = Key("tcp", "10.0.0.1:80");
  ServiceConfig with_sorry = t.Find(key)->config;
  with_sorry.sorry_server = Ap("10.0.9.9:80");
  ASSERT_TRUE(t.EditService(key, with_sorry).ok());
  DestConfig checked = t.Find(key)->dests.at(Ap("10.0.1.1:80"));
  checked.agent_id = "rs-1";
  checked.check = DefaultCheck(CheckType::kTcp);
  ASSERT_TRUE(t.EditDest(key, Ap("10.0.1.1:80"), checked).ok());

  ASSERT_TRUE(
      RestoreRules(t, "-E -t 10.0.0.1:80 -s rr\n-e -t 10.0.0.1:80 -r 10.0.1.1:80 -w 4\n").ok());
  EXPECT_EQ(t.Find(key)->config.scheduler, "rr");
  EXPECT_EQ(t.Find(key)->config.sorry_server, Ap("10.0.9.9:80"));
  const DestConfig& d = t.Find(key)->dests.at(Ap("10.0.1.1:80"));
  EXPECT_EQ(d.weight, 4u);
  EXPECT_EQ(d.agent_id, "rs-1");
  EXPECT_EQ(d.check, DefaultCheck(CheckType::kTcp));
}

TEST(IpvsadmRules, ApplyRefusesCommandsThatDoNotChangeTheTable) {
  VirtualServiceTable t;
  Command list;
  list.verb = Verb::kList;
  EXPECT_EQ(Apply(t, list).status().code(), Code::kInvalidArgument);
  Command zero;
  zero.verb = Verb::kZero;
  EXPECT_EQ(Apply(t, zero).status().code(), Code::kInvalidArgument);
}

// Random tables of everything the save format expresses: save, restore into an empty table,
// and the tables are equal and save identically.
TEST(IpvsadmRules, RoundTripPropertySaveRestoreEqualTable) {
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    Random rng(seed);
    VirtualServiceTable t;
    const size_t services = rng.Uniform(8);
    for (size_t i = 0; i < services; ++i) {
      const ServiceKey key = RandomKey(rng);
      if (!t.AddService(key, RandomServiceConfig(rng, key)).ok()) continue;  // a duplicate key
      const size_t dests = rng.Uniform(5);
      for (size_t j = 0; j < dests; ++j) {
        (void)t.AddDest(key, RandomDestAddr(rng, key.vip.family()), RandomDestConfig(rng, key));
      }
    }
    const std::string saved = SaveRules(t);
    VirtualServiceTable back;
    auto restored = RestoreRules(back, saved);
    ASSERT_TRUE(restored.ok()) << "seed " << seed << ": " << restored.status().ToString() << "\n"
                               << saved;
    EXPECT_EQ(back, t) << "seed " << seed << "\n" << saved;
    EXPECT_EQ(SaveRules(back), saved);
  }
}

}  // namespace
}  // namespace vsc::vservice

#include "vservice/ipvsadm_args.h"

#include <gtest/gtest.h>

#include <sstream>
#include <vector>

#include "vservice_test_util.h"

namespace vsc::vservice {
namespace {

using testing::Ap;
using testing::ExpectPrefix;
using testing::Key;

std::vector<std::string> Split(std::string_view line) {
  std::istringstream in{std::string(line)};
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

Command Parse(std::string_view line) {
  auto cmd = ParseArgs(Split(line));
  EXPECT_TRUE(cmd.ok()) << line << ": " << cmd.status().ToString();
  return cmd.ok() ? *cmd : Command{};
}

std::string Error(std::string_view line) {
  auto cmd = ParseArgs(Split(line));
  EXPECT_FALSE(cmd.ok()) << line;
  return cmd.ok() ? "" : cmd.status().message();
}

TEST(IpvsadmArgs, AddServiceWithEveryOption) {
  const Command c = Parse("-A -u 10.0.0.1:53 -s rr -p 600 -M 255.255.255.0 -o");
  EXPECT_EQ(c.verb, Verb::kAddService);
  EXPECT_EQ(c.service, Key("udp", "10.0.0.1:53"));
  EXPECT_EQ(c.scheduler, "rr");
  EXPECT_EQ(c.persistent, 600u);
  EXPECT_EQ(c.netmask_prefix, 24);
  EXPECT_TRUE(c.one_packet);
  const ServiceConfig config = ToServiceConfig(c);
  EXPECT_EQ(config.scheduler, "rr");
  EXPECT_EQ(config.persistence, (Persistence{600, 24}));
  EXPECT_TRUE(config.one_packet);
}

TEST(IpvsadmArgs, LongFormsAreTheSameCommand) {
  EXPECT_EQ(Parse("--add-service --udp-service 10.0.0.1:53 --scheduler rr --persistent 600 "
                  "--netmask 255.255.255.0 --ops"),
            Parse("-A -u 10.0.0.1:53 -s rr -p 600 -M 255.255.255.0 -o"));
  EXPECT_EQ(Parse("--add-server --tcp-service=10.0.0.1:80 --real-server=10.0.1.1:8080 "
                  "--masquerading --weight=3 --u-threshold=100 --l-threshold=50"),
            Parse("-a -t 10.0.0.1:80 -r 10.0.1.1:8080 -m -w 3 -x 100 -y 50"));
  EXPECT_EQ(Parse("-a -t 10.0.0.1:80 -r 10.0.1.1:8080 -m -w3"),
            Parse("-a -t 10.0.0.1:80 -r 10.0.1.1:8080 -m -w 3"));
  EXPECT_EQ(Parse("-Ln"), Parse("-L -n"));
  EXPECT_EQ(Parse("-At 10.0.0.1:80"), Parse("-A -t 10.0.0.1:80"));
  EXPECT_EQ(Parse("-A -u 10.0.0.1:53 -O"), Parse("-A -u 10.0.0.1:53 -o"));
  EXPECT_EQ(Parse("--edit-service -t 10.0.0.1:80"), Parse("-E -t 10.0.0.1:80"));
  EXPECT_EQ(Parse("--delete-server -t 10.0.0.1:80 -r 10.0.1.1"),
            Parse("-d -t 10.0.0.1:80 -r 10.0.1.1:80"));
}

TEST(IpvsadmArgs, DefaultsAreIpvsadms) {
  const Command c = Parse("-A -t 10.0.0.1:80");
  const ServiceConfig s = ToServiceConfig(c);
  EXPECT_EQ(s.scheduler, "wlc");
  EXPECT_FALSE(s.persistence);
  // -p without a value: libipvs IPVS_SVC_PERSISTENT_TIMEOUT, with the host mask.
  EXPECT_EQ(ToServiceConfig(Parse("-A -t 10.0.0.1:80 -p")).persistence, (Persistence{360, 32}));
  EXPECT_EQ(ToServiceConfig(Parse("-A -t 10.0.0.1:80 -p -s rr")).persistence,
            (Persistence{360, 32}));
  EXPECT_EQ(ToServiceConfig(Parse("-A -t [2001:db8::1]:80 -p")).persistence,
            (Persistence{360, 128}));
  EXPECT_EQ(ToServiceConfig(Parse("-A -t [2001:db8::1]:80 -p 60 -M 64")).persistence,
            (Persistence{60, 64}));
  const DestConfig d = ToDestConfig(Parse("-a -t 10.0.0.1:80 -r 10.0.1.1"));
  EXPECT_EQ(d.method, Method::kNat);
  EXPECT_EQ(d.weight, 1u);
  EXPECT_EQ(d.u_threshold, 0u);
}

TEST(IpvsadmArgs, RealServerPortDefaultsToTheVirtualPort) {
  EXPECT_EQ(Parse("-a -u 10.0.0.1:53 -r 10.0.1.1 -g").real_server, Ap("10.0.1.1:53"));
  EXPECT_EQ(Parse("-a -u 10.0.0.1:53 -r 10.0.1.1:5353 -g").real_server, Ap("10.0.1.1:5353"));
  EXPECT_EQ(Parse("-a -u 10.0.0.1:53 -r 10.0.1.1 -g").method, Method::kDr);
  EXPECT_EQ(Parse("-a -u [2001:db8::1]:53 -r [2001:db8::2]:53 -m").real_server,
            Ap("[2001:db8::2]:53"));
}

TEST(IpvsadmArgs, ListSaveZeroAndSet) {
  const Command l = Parse("-L -n --stats --exact");
  EXPECT_EQ(l.verb, Verb::kList);
  EXPECT_EQ(l.list, (ListFlags{.numeric = true, .stats = true, .exact = true}));
  EXPECT_EQ(Parse("-l -c").list.connections, true);
  EXPECT_TRUE(Parse("-L --timeout").list.timeouts);
  EXPECT_EQ(Parse("-L -t 10.0.0.1:80 --rate").service, Key("tcp", "10.0.0.1:80"));
  EXPECT_EQ(ParseArgs(std::vector<std::string>{})->verb, Verb::kList);  // bare ipvsadm lists
  EXPECT_EQ(Parse("-S -n").verb, Verb::kSave);
  EXPECT_TRUE(Parse("--save -n").list.numeric);
  EXPECT_EQ(Parse("-R").verb, Verb::kRestore);
  EXPECT_EQ(Parse("-C").verb, Verb::kClear);
  EXPECT_EQ(Parse("--clear").verb, Verb::kClear);
  EXPECT_FALSE(Parse("-Z").service);
  EXPECT_EQ(Parse("--zero -u 10.0.0.1:53").service, Key("udp", "10.0.0.1:53"));
  EXPECT_EQ(Parse("--set 900 120 300").timeouts, (Timeouts{900, 120, 300}));
  EXPECT_EQ(Parse("--set 0 0 60").timeouts.udp, 60u);
}

TEST(IpvsadmArgs, IpvsadmErrorTexts) {
  EXPECT_EQ(Error("-A -D -t 10.0.0.1:80"), "multiple commands specified");
  EXPECT_EQ(Error("-A -t 10.0.0.1:80 -s rr -s wlc"), "multiple 'scheduler' options specified");
  EXPECT_EQ(Error("-a -t 10.0.0.1:80 -r 10.0.1.1 -g -m"),
            "multiple 'forwarding-method' options specified");
  EXPECT_EQ(Error("-A -t 1.2.3.4:80 -u 1.2.3.4:80"),
            "multiple 'service-address' options specified");
  EXPECT_EQ(Error("-a -t 10.0.0.1:80"),
            "You need to supply the 'real-server' option for the 'add-server' command");
  EXPECT_EQ(Error("-A -s rr"),
            "You need to supply the 'service-address' option for the 'add-service' command");
  EXPECT_EQ(Error("-A -t 10.0.0.1:80 -w 3"),
            "Illegal 'weight' option with the 'add-service' command");
  EXPECT_EQ(Error("-D -t 10.0.0.1:80 -s rr"),
            "Illegal 'scheduler' option with the 'delete-service' command");
  EXPECT_EQ(Error("-C -n"), "Illegal 'numeric' option with the 'flush' command");
  EXPECT_EQ(Error("-L -c -t 10.0.0.1:80"),
            "The option 'service-address' conflicts with the 'connection' option in the 'list' "
            "command");
  EXPECT_EQ(Error("-L -c --stats"), "options conflicts in the list command");
  EXPECT_EQ(Error("-A -t 10.0.0.1"), "Zero port specified for non-persistent service");
  EXPECT_EQ(Error("-A -t 10.0.0.1:80 -o"),
            "One-Packet Scheduling is only for UDP virtual services");
  EXPECT_EQ(Error("--set 1 2"), "--set option requires 3 timeout values");
  EXPECT_EQ(Error("-C extra"), "unexpected argument extra");
  EXPECT_EQ(Error("-L --bogus"), "invalid option `--bogus'");
  EXPECT_EQ(Error("-L -q"), "invalid option `-q'");
  ExpectPrefix(Error("-A -t 10.0.0.1:80 -p 0"), "invalid timeout value `0' s");
}

TEST(IpvsadmArgs, BadValuesSayWhatIsWrong) {
  ExpectPrefix(Error("-A -t 10.0.0:80"), "illegal virtual server address[:port] specified");
  ExpectPrefix(Error("-a -t 10.0.0.1:80 -r 10.0.1.1:99999"),
               "illegal real server address[:port] specified");
  ExpectPrefix(Error("-a -t 10.0.0.1:80 -r 10.0.1.1 -w 65536"), "illegal weight specified");
  ExpectPrefix(Error("-a -t 10.0.0.1:80 -r 10.0.1.1 -w -1"), "illegal weight specified");
  ExpectPrefix(Error("-a -t 10.0.0.1:80 -r 10.0.1.1 -x many"), "illegal u_threshold specified");
  ExpectPrefix(Error("-a -t 10.0.0.1:80 -r 10.0.1.1 -y 2147483648"),
               "illegal l_threshold specified");
  ExpectPrefix(Error("-A -t 10.0.0.1:80 -p -M 255.0.255.0"),
               "illegal virtual server persistent mask specified");
  ExpectPrefix(Error("-A -t [::1]:80 -p -M 255.255.255.0"), "illegal ipv6 netmask specified");
  EXPECT_NE(Error("-A -t 10.0.0.1:80 -M 255.255.255.0").find("add -p"), std::string::npos);
  EXPECT_NE(Error("-a -t 10.0.0.1:80 -w").find("needs a value"), std::string::npos);
  EXPECT_NE(Error("-t 10.0.0.1:80").find("no command given"), std::string::npos);
}

TEST(IpvsadmArgs, UnsupportedIpvsadmFeaturesAreRefusedClearly) {
  EXPECT_NE(Error("-a -t 10.0.0.1:80 -r 10.0.1.1 -i").find("tunnelling"), std::string::npos);
  EXPECT_NE(Error("-a -t 10.0.0.1:80 -r 10.0.1.1 --ipip").find("user-space"), std::string::npos);
  EXPECT_NE(Error("-A -f 1 -s rr").find("firewall-mark"), std::string::npos);
  EXPECT_NE(Error("-A --sctp-service 10.0.0.1:80").find("SCTP"), std::string::npos);
  EXPECT_NE(Error("-A -t 10.0.0.1:80 -p --pe sip").find("persistence engines"), std::string::npos);
  EXPECT_NE(Error("-A -t 10.0.0.1:80 -s sh -b sh-port").find("scheduler flags"), std::string::npos);
  EXPECT_NE(Error("--start-daemon master").find("sync daemons"), std::string::npos);
}

}  // namespace
}  // namespace vsc::vservice

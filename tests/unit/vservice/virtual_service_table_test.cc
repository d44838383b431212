#include "vservice/virtual_service_table.h"

#include <gtest/gtest.h>

#include "vservice_test_util.h"

namespace vsc::vservice {
namespace {

using testing::Ap;
using testing::Key;

// The ipvsadm text an error starts with, and that what follows says what to do.
void ExpectError(const Status& s, Code code, std::string_view ipvsadm_text) {
  EXPECT_EQ(s.code(), code) << s.ToString();
  EXPECT_EQ(s.message().substr(0, ipvsadm_text.size()), ipvsadm_text) << s.ToString();
  EXPECT_GT(s.message().size(), ipvsadm_text.size() + 10) << "no guidance: " << s.ToString();
}

class TableTest : public ::testing::Test {
 protected:
  const ServiceKey tcp_ = Key("tcp", "10.0.0.1:80");
  const ServiceKey udp_ = Key("udp", "10.0.0.1:53");
  const ServiceKey v6_ = Key("udp", "[2001:db8::1]:53");
  VirtualServiceTable table_;
};

TEST_F(TableTest, AddEditDeleteReturnWhatChanged) {
  auto add = table_.AddService(tcp_, ServiceConfig{});
  ASSERT_TRUE(add.ok()) << add.status().ToString();
  EXPECT_EQ(*add, (Change{ChangeKind::kAddService, {tcp_}, std::nullopt, 0, true}));
  EXPECT_EQ(table_.Find(tcp_)->config.scheduler, "wlc");

  auto dest = table_.AddDest(tcp_, Ap("10.0.1.1:8080"), DestConfig{});
  ASSERT_TRUE(dest.ok());
  EXPECT_EQ(*dest, (Change{ChangeKind::kAddDest, {tcp_}, Ap("10.0.1.1:8080"), 0, true}));

  ServiceConfig rr;
  rr.scheduler = "rr";
  EXPECT_TRUE(table_.EditService(tcp_, rr)->modified);
  EXPECT_FALSE(table_.EditService(tcp_, rr)->modified);  // set what was there
  EXPECT_EQ(table_.Find(tcp_)->dests.size(), 1u);        // -E keeps the destinations

  DestConfig heavy;
  heavy.weight = 7;
  EXPECT_TRUE(table_.EditDest(tcp_, Ap("10.0.1.1:8080"), heavy)->modified);
  EXPECT_EQ(table_.Find(tcp_)->dests.at(Ap("10.0.1.1:8080")).weight, 7u);

  ASSERT_TRUE(table_.AddDest(tcp_, Ap("10.0.1.2:8080"), DestConfig{}).ok());
  EXPECT_EQ(table_.DelDest(tcp_, Ap("10.0.1.1:8080"))->kind, ChangeKind::kDelDest);
  auto del = table_.DelService(tcp_);
  ASSERT_TRUE(del.ok());
  EXPECT_EQ(*del, (Change{ChangeKind::kDelService, {tcp_}, std::nullopt, 1, true}));
  EXPECT_TRUE(table_.services().empty());
}

TEST_F(TableTest, ErrorsUseIpvsadmTexts) {
  ExpectError(table_.EditService(tcp_, {}).status(), Code::kNotFound, "No such service");
  ExpectError(table_.DelService(tcp_).status(), Code::kNotFound, "No such service");
  ExpectError(table_.AddDest(tcp_, Ap("10.0.1.1:80"), {}).status(), Code::kNotFound,
              "Service not defined");
  ExpectError(table_.EditDest(tcp_, Ap("10.0.1.1:80"), {}).status(), Code::kNotFound,
              "Service not defined");
  ExpectError(table_.DelDest(tcp_, Ap("10.0.1.1:80")).status(), Code::kNotFound,
              "Service not defined");
  ASSERT_TRUE(table_.AddService(tcp_, {}).ok());
  ExpectError(table_.AddService(tcp_, {}).status(), Code::kAlreadyExists, "Service already exists");
  ExpectError(table_.EditDest(tcp_, Ap("10.0.1.1:80"), {}).status(), Code::kNotFound,
              "No such destination");
  ExpectError(table_.DelDest(tcp_, Ap("10.0.1.1:80")).status(), Code::kNotFound,
              "No such destination");
  ASSERT_TRUE(table_.AddDest(tcp_, Ap("10.0.1.1:80"), {}).ok());
  ExpectError(table_.AddDest(tcp_, Ap("10.0.1.1:80"), {}).status(), Code::kAlreadyExists,
              "Destination already exists");
}

TEST_F(TableTest, ServiceValidation) {
  ServiceConfig c;
  c.scheduler = "lblc";
  ExpectError(table_.AddService(tcp_, c).status(), Code::kInvalidArgument,
              "Scheduler or persistence engine not found");
  for (std::string_view name : sched::SchedulerNames()) {
    c.scheduler = std::string(name);
    EXPECT_TRUE(ValidateService(tcp_, c).ok()) << name;
  }
  c = ServiceConfig{};
  c.one_packet = true;
  ExpectError(ValidateService(tcp_, c), Code::kInvalidArgument,
              "One-Packet Scheduling is only for UDP virtual services");
  EXPECT_TRUE(ValidateService(udp_, c).ok());
  c = ServiceConfig{};
  c.persistence = Persistence{0, 32};
  ExpectError(ValidateService(tcp_, c), Code::kInvalidArgument, "invalid timeout value");
  c.persistence = Persistence{kMaxPersistenceTimeout + 1, 32};
  ExpectError(ValidateService(tcp_, c), Code::kInvalidArgument, "invalid timeout value");
  c.persistence = Persistence{kMaxPersistenceTimeout, 33};
  ExpectError(ValidateService(tcp_, c), Code::kInvalidArgument,
              "illegal virtual server persistent mask specified");
  c.persistence = Persistence{300, 0};  // IPv4 /0: every client shares one server
  EXPECT_TRUE(ValidateService(tcp_, c).ok());
  ExpectError(ValidateService(v6_, c), Code::kInvalidArgument, "illegal ipv6 netmask specified");
  c.persistence = Persistence{300, 128};
  EXPECT_TRUE(ValidateService(v6_, c).ok());
  ExpectError(ValidateService(Key("tcp", "10.0.0.1:0"), ServiceConfig{}), Code::kInvalidArgument,
              "Zero port specified");
}

TEST_F(TableTest, SorryServerMustMatchTheVip) {
  ServiceConfig c;
  c.sorry_server = Ap("10.0.9.9:80");
  EXPECT_TRUE(ValidateService(tcp_, c).ok());
  c.sorry_server = Ap("[2001:db8::9]:80");
  ExpectError(ValidateService(tcp_, c), Code::kInvalidArgument,
              "Different address family is allowed only for tunneling servers");
  c.sorry_server = Ap("10.0.9.9:0");
  EXPECT_FALSE(ValidateService(tcp_, c).ok());
}

TEST_F(TableTest, DestinationValidation) {
  DestConfig d;
  EXPECT_TRUE(ValidateDest(tcp_, Ap("10.0.1.1:80"), d).ok());
  ExpectError(ValidateDest(tcp_, Ap("[2001:db8::2]:80"), d), Code::kInvalidArgument,
              "Different address family is allowed only for tunneling servers");
  EXPECT_TRUE(ValidateDest(v6_, Ap("[2001:db8::2]:53"), d).ok());
  EXPECT_FALSE(ValidateDest(tcp_, Ap("10.0.1.1:0"), d).ok());
  EXPECT_FALSE(ValidateDest(tcp_, Ap("0.0.0.0:80"), d).ok());
  d.weight = 65536;
  ExpectError(ValidateDest(tcp_, Ap("10.0.1.1:80"), d), Code::kInvalidArgument,
              "illegal weight specified");
  d.weight = 0;  // quiescent
  EXPECT_TRUE(ValidateDest(tcp_, Ap("10.0.1.1:80"), d).ok());
  d.l_threshold = 5;  // the kernel refuses l > u, u = 0 included
  ExpectError(ValidateDest(tcp_, Ap("10.0.1.1:80"), d), Code::kInvalidArgument,
              "Numerical result out of range");
  d.u_threshold = 5;
  EXPECT_TRUE(ValidateDest(tcp_, Ap("10.0.1.1:80"), d).ok());
  d.u_threshold = kMaxThreshold + 1u;
  ExpectError(ValidateDest(tcp_, Ap("10.0.1.1:80"), d), Code::kInvalidArgument,
              "illegal u_threshold specified");
}

TEST_F(TableTest, DirectReturnIsForUdpOnly) {
  DestConfig dr;
  dr.method = Method::kDr;
  EXPECT_TRUE(ValidateDest(udp_, Ap("10.0.1.1:9000"), dr).ok());
  const Status s = ValidateDest(tcp_, Ap("10.0.1.1:80"), dr);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find("use -m (nat)"), std::string::npos) << s.ToString();
  EXPECT_EQ(ForwardName(Method::kDr), "Route");
  EXPECT_EQ(ForwardName(Method::kNat), "Masq");
  EXPECT_EQ(MethodName(Method::kDr), "dr");
}

TEST_F(TableTest, AgentIdAndCheckAreValidated) {
  DestConfig d;
  d.agent_id = "rs 1";
  EXPECT_FALSE(ValidateDest(tcp_, Ap("10.0.1.1:80"), d).ok());
  d.agent_id = "rs-1";
  d.check = DefaultCheck(CheckType::kHttpGet);  // no path
  EXPECT_NE(ValidateDest(tcp_, Ap("10.0.1.1:80"), d).message().find("HTTP_GET"), std::string::npos);
  d.check->path = "/health";
  EXPECT_TRUE(ValidateDest(tcp_, Ap("10.0.1.1:80"), d).ok());
}

TEST_F(TableTest, FailedCallsChangeNothing) {
  ASSERT_TRUE(table_.AddService(udp_, {}).ok());
  ASSERT_TRUE(table_.AddDest(udp_, Ap("10.0.1.1:53"), {}).ok());
  const VirtualServiceTable before = table_;
  ServiceConfig bad;
  bad.scheduler = "nope";
  EXPECT_FALSE(table_.EditService(udp_, bad).ok());
  DestConfig bad_dest;
  bad_dest.weight = 1u << 20;
  EXPECT_FALSE(table_.EditDest(udp_, Ap("10.0.1.1:53"), bad_dest).ok());
  EXPECT_FALSE(table_.AddDest(udp_, Ap("10.0.1.2:53"), bad_dest).ok());
  EXPECT_FALSE(table_.AddService(tcp_, bad).ok());
  EXPECT_EQ(table_, before);
}

TEST_F(TableTest, LimitsRefuseWithIpvsadmText) {
  VirtualServiceTable small(TableLimits{1, 1});
  ASSERT_TRUE(small.AddService(tcp_, {}).ok());
  ExpectError(small.AddService(udp_, {}).status(), Code::kResourceExhausted,
              "Memory allocation problem");
  ASSERT_TRUE(small.AddDest(tcp_, Ap("10.0.1.1:80"), {}).ok());
  ExpectError(small.AddDest(tcp_, Ap("10.0.1.2:80"), {}).status(), Code::kResourceExhausted,
              "Memory allocation problem");
}

TEST_F(TableTest, ClearRemovesEverythingAndSaysWhat) {
  EXPECT_FALSE(table_.Clear().modified);
  ASSERT_TRUE(table_.AddService(tcp_, {}).ok());
  ASSERT_TRUE(table_.AddService(v6_, {}).ok());
  ASSERT_TRUE(table_.AddDest(v6_, Ap("[2001:db8::2]:53"), {}).ok());
  const Change c = table_.Clear();
  EXPECT_EQ(c, (Change{ChangeKind::kClear, {tcp_, v6_}, std::nullopt, 1, true}));
  EXPECT_TRUE(table_.services().empty());
}

}  // namespace
}  // namespace vsc::vservice

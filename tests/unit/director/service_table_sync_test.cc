// The service table in etcd (issue 11), its pure part and its editor without etcd: the key's
// value carries everything but the built-in entries and loads back equal; a read is applied
// only when its revision is newer than any seen; a value that does not load is reported once
// and the running table stays; only the lease holder may write, and a standby's refusal names
// the holder; a change of the built-in entries alone needs no etcd.
#include "director/service_table_sync.h"

#include <gtest/gtest.h>

#include "director/etcd_service_editor.h"
#include "fake_service_editor.h"
#include "vservice/ipvsadm_rules.h"

namespace vsc::director {
namespace {

using namespace std::chrono_literals;
using Kind = ServiceTableSync::Read::Kind;

vservice::VirtualServiceTable Table(const std::string& rules) {
  vservice::VirtualServiceTable t;
  EXPECT_TRUE(vservice::RestoreRules(t, rules).ok());
  return t;
}

const vservice::ServiceKey kBuiltin{vservice::Proto::kUdp, *vservice::IpAddress::Parse("127.0.0.1"),
                                    9000};

etcd::KeyValue Kv(int64_t revision, std::string value) {
  return {ServiceTableKey("c"), std::move(value), 1, revision, 0};
}

TEST(ServiceTableSyncTest, TheValueLeavesOutTheBuiltinEntriesAndLoadsBackEqual) {
  EXPECT_EQ(ServiceTableKey("prod"), "/vscluster/prod/services");
  const vservice::VirtualServiceTable shared =
      Table("-A -t 10.0.0.1:80 -s wlc\n-a -t 10.0.0.1:80 -r 10.0.0.2:80 -m -w 3 -x 9 -y 4\n");
  vservice::VirtualServiceTable running = shared;
  ASSERT_TRUE(running.AddService(kBuiltin, {}).ok());
  const std::string value = EncodeServiceTable(running, {kBuiltin});
  auto back = DecodeServiceTable(Kv(7, value), {});
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, shared);
  auto bad = DecodeServiceTable(Kv(8, "[[service]]\nprotocol = 7\n"), {});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("etcd key /vscluster/c/services (revision 8)"),
            std::string::npos)
      << bad.status().message();
}

TEST(ServiceTableSyncTest, WithBuiltinKeepsTheRunningBuiltinEntriesOverEtcds) {
  vservice::VirtualServiceTable running;
  vservice::ServiceConfig lookup;
  lookup.scheduler = "sh";
  ASSERT_TRUE(running.AddService(kBuiltin, lookup).ok());
  vservice::VirtualServiceTable shared = Table("-A -t 10.0.0.1:80 -s rr\n");
  ASSERT_TRUE(shared.AddService(kBuiltin, {}).ok());  // another director's lookup entry
  const vservice::VirtualServiceTable out = WithBuiltin(shared, running, {kBuiltin});
  ASSERT_EQ(out.services().size(), 2u);
  EXPECT_EQ(out.Find(kBuiltin)->config.scheduler, "sh");
  const vservice::ServiceKey http{vservice::Proto::kTcp, *vservice::IpAddress::Parse("10.0.0.1"),
                                  80};
  EXPECT_NE(out.Find(http), nullptr) << "etcd's own service";
}

TEST(ServiceTableSyncTest, OnlyANewerRevisionIsAppliedAndAMalformedOneOnce) {
  ServiceTableSync sync;
  EXPECT_EQ(sync.OnRead(std::nullopt, {}).kind, Kind::kAbsent);
  const std::string v = EncodeServiceTable(Table("-A -u 10.0.0.1:53\n"), {});
  ServiceTableSync::Read r = sync.OnRead(Kv(5, v), {});
  ASSERT_EQ(r.kind, Kind::kApply);
  EXPECT_EQ(r.revision, 5);
  EXPECT_EQ(*r.table, Table("-A -u 10.0.0.1:53\n"));
  // Not applied yet: read again, still to apply. Applied: current.
  EXPECT_EQ(sync.OnRead(Kv(5, v), {}).kind, Kind::kApply);
  sync.OnApplied(5, v);
  EXPECT_EQ(sync.OnRead(Kv(5, v), {}).kind, Kind::kCurrent);
  EXPECT_EQ(sync.OnRead(Kv(4, "anything"), {}).kind, Kind::kCurrent);
  // A value that does not load: reported once, then its revision counts as seen.
  ServiceTableSync::Read bad = sync.OnRead(Kv(6, "not toml ["), {});
  ASSERT_EQ(bad.kind, Kind::kMalformed);
  EXPECT_FALSE(bad.error.ok());
  EXPECT_EQ(sync.OnRead(Kv(6, "not toml ["), {}).kind, Kind::kCurrent);
  EXPECT_EQ(sync.revision(), 6) << "the next write compares against the newest revision";
  EXPECT_EQ(sync.value(), v) << "what runs is still revision 5's table";
  EXPECT_EQ(sync.OnRead(Kv(9, v), {}).kind, Kind::kApply);
}

TEST(ServiceTableSyncTest, OnlyTheLeaseHolderWritesAndTheStandbyNamesIt) {
  const TimePoint now = TimePoint(100s);
  LeaseView held{true, 1, now + 1s, "", ""};
  EXPECT_TRUE(ServiceTableWritable(held, now).ok());
  EXPECT_FALSE(ServiceTableWritable(held, now + 1s).ok()) << "expired by our own clock";
  LeaseView standby{false, 0, {}, "another director holds the sequencer lease (A)", "A"};
  Status s = ServiceTableWritable(standby, now);
  EXPECT_EQ(s.code(), Code::kFailedPrecondition);
  EXPECT_EQ(s.message(),
            "this director is a standby; change the service table on the active director (A)");
  LeaseView unknown{false, 0, {}, "no quorum for the sequencer lease (etcd: down)", ""};
  Status u = ServiceTableWritable(unknown, now);
  EXPECT_EQ(u.code(), Code::kUnavailable);
  EXPECT_NE(u.message().find("no quorum for the sequencer lease"), std::string::npos);
}

class EtcdServiceEditorTest : public ::testing::Test {
 protected:
  EtcdServiceEditorTest()
      : editor_(inner_, EtcdClient({}, 100ms), ServiceTableKey("c"), {kBuiltin}, clock_) {
    vservice::VirtualServiceTable start;
    EXPECT_TRUE(start.AddService(kBuiltin, {}).ok());
    EXPECT_TRUE(inner_.Commit(start).ok());
    editor_.StartedFrom(3, true);
  }
  uint64_t Metric(const std::string& line) {
    const std::string text = editor_.RenderMetrics();
    const size_t at = text.find(line + " ");
    return at == std::string::npos ? ~0ull : std::stoull(text.substr(at + line.size() + 1));
  }

  ManualClock clock_;
  FakeServiceEditor inner_;
  EtcdServiceEditor editor_;
};

TEST_F(EtcdServiceEditorTest, AWatchedTableIsAppliedWithTheBuiltinEntriesAndCounted) {
  const vservice::VirtualServiceTable shared = Table("-A -t 10.0.0.1:80\n");
  editor_.OnRead(Kv(4, EncodeServiceTable(shared, {})));
  EXPECT_EQ(inner_.table(), WithBuiltin(shared, inner_.table(), {kBuiltin}));
  EXPECT_NE(inner_.table().Find(kBuiltin), nullptr);
  EXPECT_EQ(editor_.revision(), 4);
  EXPECT_EQ(Metric("vsc_director_service_table_updates_total{source=\"etcd\"}"), 1u);
  const int commits = inner_.commits;
  editor_.OnRead(Kv(4, EncodeServiceTable(shared, {})));
  EXPECT_EQ(inner_.commits, commits) << "the same revision again changes nothing";
}

TEST_F(EtcdServiceEditorTest, AMalformedOrUnappliableTableIsCountedAndTheRunningOneStays) {
  const vservice::VirtualServiceTable before = inner_.table();
  editor_.OnRead(Kv(4, "[[service]]\nprotocol = \"sctp\"\n"));
  EXPECT_EQ(inner_.table(), before);
  EXPECT_EQ(Metric("vsc_director_service_table_rejected_total{reason=\"malformed\"}"), 1u);
  inner_.fail_next = InvalidArgument("port in use");
  editor_.OnRead(Kv(5, EncodeServiceTable(Table("-A -t 10.0.0.1:80\n"), {})));
  EXPECT_EQ(inner_.table(), before);
  EXPECT_EQ(Metric("vsc_director_service_table_rejected_total{reason=\"apply_failed\"}"), 1u);
  EXPECT_EQ(editor_.revision(), 5);
}

TEST_F(EtcdServiceEditorTest, AStandbyRefusesAChangeAndChangesNothing) {
  editor_.SetLease({false, 0, {}, "another director holds the sequencer lease (A)", "A"});
  const int commits = inner_.commits;
  auto r = editor_.Commit(Table("-A -t 10.0.0.1:80\n"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "this director is a standby; change the service table on the active director (A)");
  EXPECT_EQ(inner_.commits, commits);
  EXPECT_EQ(Metric("vsc_director_service_table_refusals_total{reason=\"standby\"}"), 1u);
}

TEST_F(EtcdServiceEditorTest, TheHolderRefusesAChangeEtcdDidNotTake) {
  editor_.SetLease({true, 1, clock_.Now() + 3s, "", ""});
  const int commits = inner_.commits;
  auto r = editor_.Commit(Table("-A -t 10.0.0.1:80\n"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kUnavailable);
  EXPECT_NE(r.status().message().find("nothing changed"), std::string::npos);
  EXPECT_EQ(inner_.commits, commits);
  EXPECT_EQ(Metric("vsc_director_service_table_refusals_total{reason=\"etcd_unavailable\"}"), 1u);
}

TEST_F(EtcdServiceEditorTest, AChangeOfTheBuiltinEntriesAloneNeedsNoEtcd) {
  editor_.SetLease({false, 0, {}, "another director holds the sequencer lease (A)", "A"});
  vservice::VirtualServiceTable next = inner_.table();
  vservice::ServiceConfig sh;
  sh.scheduler = "sh";
  ASSERT_TRUE(next.EditService(kBuiltin, sh).ok());
  auto r = editor_.Commit(next);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(inner_.table().Find(kBuiltin)->config.scheduler, "sh");
}

}  // namespace
}  // namespace vsc::director

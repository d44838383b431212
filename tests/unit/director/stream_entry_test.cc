// The encode-once path of the replication stream (director/stream_entry.h): a Replicate built
// from the entries' cached encodings is byte for byte the message protobuf builds from the
// entries themselves, and every replica, wherever its window stands and whether its entries come
// from the recent window or back from the log, receives exactly the log's entries.
#include "director/stream_entry.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "director/replication_wire.h"
#include "proto/control.pb.h"
#include "replication/log.h"
#include "unit/director/replicator_fixture.h"

namespace vsc::director {
namespace {

using replication::Entry;
using replication::Statement;
using replication::Value;

Entry WriteEntry(uint64_t epoch, uint64_t seq, std::vector<Statement> statements) {
  Entry e;
  e.epoch = epoch;
  e.seq = seq;
  e.ts_micros = 1700000000000000 + static_cast<int64_t>(seq);
  e.statements = std::move(statements);
  return e;
}

// What Pump built before the cache: a fresh protobuf per message, serialized by protobuf.
std::string Reference(const std::vector<Entry>& entries, uint64_t head_seq, uint64_t epoch) {
  proto::Message m;
  proto::Replicate* rep = m.mutable_replicate();
  for (const Entry& e : entries) ToProto(e, rep->add_entries());
  rep->set_head_seq(head_seq);
  rep->set_epoch(epoch);
  return m.SerializeAsString();
}

std::vector<StreamEntryPtr> Cached(const std::vector<Entry>& entries) {
  std::vector<StreamEntryPtr> out;
  for (const Entry& e : entries) out.push_back(MakeStreamEntry(e));
  return out;
}

std::vector<Entry> Samples() {
  std::vector<Entry> out;
  out.push_back(WriteEntry(1, 1, {{"INSERT INTO t(v) VALUES (?1)", {Value::Text("one")}}}));
  out.push_back(WriteEntry(3, 2,
                           {{"UPDATE t SET a = ?1, b = ?2, c = ?3, d = ?4 WHERE id = ?5",
                             {Value::Int(-7), Value::Real(2.5), Value::Null(),
                              Value::Blob(std::string(300, '\0')), Value::Int(INT64_MAX)}},
                            {"DELETE FROM t WHERE id = 9", {}}}));
  Entry marker;
  marker.epoch = 3;
  marker.seq = 3;
  marker.kind = Entry::Kind::kChecksum;
  out.push_back(marker);
  // A 40 KiB text: lengths of three varint bytes, inside the entry and around it.
  out.push_back(
      WriteEntry(UINT64_MAX, UINT64_MAX - 1,
                 {{"INSERT INTO t(v) VALUES (?1)", {Value::Text(std::string(40000, 'x'))}}}));
  return out;
}

TEST(StreamEntryTest, AReplicateFromCachedEntriesIsTheBytesProtobufSerializes) {
  const std::vector<Entry> all = Samples();
  const std::vector<StreamEntryPtr> cached = Cached(all);
  std::string out;
  for (size_t from = 0; from <= all.size(); ++from) {
    for (size_t n = 0; from + n <= all.size(); ++n) {
      const std::vector<Entry> part(all.begin() + from, all.begin() + from + n);
      for (auto [head, epoch] : {std::pair<uint64_t, uint64_t>{0, 0},
                                 {5, 3},
                                 {200, 1u << 20},
                                 {UINT64_MAX, UINT64_MAX}}) {
        EncodeReplicate(std::span<const StreamEntryPtr>(cached).subspan(from, n), head, epoch, out);
        EXPECT_EQ(out, Reference(part, head, epoch))
            << "entries " << from << ".." << from + n << " head " << head << " epoch " << epoch;
      }
    }
  }
}

TEST(StreamEntryTest, TheEncodedMessageDecodesToTheSameEntries) {
  const std::vector<Entry> all = Samples();
  std::string out = "left over from a longer message, which must not survive";
  out.append(100000, 'z');
  EncodeReplicate(Cached(all), 42, 7, out);
  proto::Message m;
  ASSERT_TRUE(m.ParseFromString(out));
  ASSERT_TRUE(m.has_replicate());
  EXPECT_EQ(m.replicate().head_seq(), 42u);
  EXPECT_EQ(m.replicate().epoch(), 7u);
  ASSERT_EQ(m.replicate().entries_size(), static_cast<int>(all.size()));
  for (size_t i = 0; i < all.size(); ++i) {
    EXPECT_EQ(FromProto(m.replicate().entries(static_cast<int>(i))), all[i]) << "entry " << i;
  }
  const StreamEntryPtr one = MakeStreamEntry(all[1]);
  EXPECT_EQ(one->entry, all[1]);
  EXPECT_EQ(one->payload_bytes, replication::PayloadBytes(all[1]));
}

// Three replicas at different places in the stream — one in sync with a window of two, one
// catching up from the recent window, one catching up after a director restart from the log —
// each receive every entry once, in order, equal to the log's, in messages that are byte for
// byte what the replicator sent before the cache.
class StreamEntryReplicatorTest : public testing::ReplicatorFixture {
 protected:
  // Records the Replicate messages the replica received, then applies and acks them.
  void DeliverRecorded(testing::FakeReplica& r) {
    for (const proto::Message& m : r.link->sent) {
      if (m.has_replicate()) got_[r.id].push_back(m);
    }
    Deliver(r);
  }
  void Check(const std::string& id, uint64_t epoch_at_least) {
    auto log = replication::ReplicationLog::OpenReader(Path("log.db"));
    ASSERT_TRUE(log.ok()) << log.status().ToString();
    auto entries = (*log)->Read(1, 1000, 1 << 30);
    ASSERT_TRUE(entries.ok()) << entries.status().ToString();
    size_t next = 0;
    for (const proto::Message& m : got_[id]) {
      const proto::Replicate& rep = m.replicate();
      ASSERT_GT(rep.entries_size(), 0) << id;
      std::vector<Entry> expected;
      for (const proto::LogEntry& le : rep.entries()) {
        ASSERT_LT(next, entries->size()) << id << " got more entries than the log holds";
        EXPECT_EQ(FromProto(le), (*entries)[next]) << id << " seq " << le.seq();
        expected.push_back((*entries)[next++]);
      }
      EXPECT_GE(rep.head_seq(), expected.back().seq) << id;
      EXPECT_GE(rep.epoch(), epoch_at_least) << id;
      EXPECT_EQ(m.SerializeAsString(), Reference(expected, rep.head_seq(), rep.epoch())) << id;
    }
    EXPECT_EQ(next, entries->size()) << id << " did not receive every entry";
  }
  std::map<std::string, std::vector<proto::Message>> got_;
};

TEST_F(StreamEntryReplicatorTest, EveryReplicaGetsTheLogsEntriesWhereverItsWindowStands) {
  options_.window = {2, 1 << 20};
  Open();
  testing::FakeReplica a = MakeReplica("rs1");
  Join(a);
  const uint64_t first_epoch = rep_->GetStatus().epoch;
  Write("INSERT INTO t(v) VALUES (?1)", {Value::Text("a")});
  Write("INSERT INTO t(v) VALUES (?1)", {Value::Blob(std::string(200, '\x01'))});
  Write("UPDATE t SET v = ?1 WHERE id = ?2", {Value::Real(0.5), Value::Int(1)});
  Write("INSERT INTO t(v) VALUES (?1)", {Value::Null()});
  Write("INSERT INTO t(v) VALUES ('e')");
  Poll();
  DeliverRecorded(a);  // acks 1..2, is sent 3..4
  testing::FakeReplica b = MakeReplica("rs2");
  Join(b);  // catches up from 1 while rs1 is at 3..4: the same cache, other positions
  DeliverRecorded(b);
  DeliverRecorded(a);
  DeliverRecorded(b);
  DeliverRecorded(a);
  DeliverRecorded(b);
  EXPECT_EQ(a.applied, 5u);
  EXPECT_EQ(b.applied, 5u);
  EXPECT_EQ(a.digest, b.digest);

  // A restarted director has no recent window: rs3's entries are read back from the log.
  rep_->Stop();
  options_.schema_db.clear();  // the log has its bootstrap now
  Open();
  for (testing::FakeReplica* r : {&a, &b}) {
    r->link = std::make_shared<testing::FakeLink>();
    r->incarnation++;
    Join(*r);
  }
  testing::FakeReplica c = MakeReplica("rs3");
  Join(c);
  Write("INSERT INTO t(v) VALUES (?1)", {Value::Text("after the restart")});
  Poll();
  for (int i = 0; i < 5; ++i) {
    DeliverRecorded(a);
    DeliverRecorded(b);
    DeliverRecorded(c);
  }
  EXPECT_EQ(c.applied, 6u);
  EXPECT_EQ(c.digest, a.digest);
  EXPECT_EQ(b.digest, a.digest);
  for (const char* id : {"rs1", "rs2", "rs3"}) Check(id, first_epoch);
  EXPECT_GT(rep_->GetStatus().epoch, first_epoch);
}

}  // namespace
}  // namespace vsc::director

#include "realserver/replica.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <unistd.h>

#include <asio.hpp>
#include <condition_variable>
#include <future>
#include <mutex>
#include <thread>

#include "net/http_server.h"
#include "realserver/replication_wire.h"
#include "realserver/snapshot.h"
#include "replication/applier.h"
#include "replication/digest.h"
#include "replication/replica_store.h"
#include "store/database.h"
#include "support/temp_dir.h"
#include "replica_fixture.h"


namespace vsc::realserver {
namespace {

using namespace std::chrono_literals;

TEST_F(ReplicaTest, AppliesInOrderAndAcksTheSameStateAsTheCoreLibrary) {
  const std::string path = dir_.File("a.db");
  auto r = OpenReplica(path);
  StartAndWait(*r);
  EXPECT_FALSE(r->position().content_checksum.empty());  // a fresh replica reports its content
  EXPECT_EQ(r->position().content_checksum, *replication::Checksum(path));
  r->Submit(5, Range(1, 3));
  r->Submit(5, Range(4, 10));
  r->Submit(5, Range(11, 60));
  auto acks = WaitForAck(60);
  // Every entry has exactly one outcome, in seq order, across the acks.
  uint64_t next = 1;
  for (const auto& a : acks) {
    EXPECT_EQ(a.session, 5u);
    EXPECT_TRUE(a.ack.error().empty()) << a.ack.error();
    for (const auto& o : a.ack.outcomes()) {
      EXPECT_EQ(o.seq(), next++);
      EXPECT_EQ(o.code() != 0, o.seq() % 7 == 0) << o.seq() << " " << o.error();
      EXPECT_EQ(o.rows_changed(), o.seq() % 7 == 0 || o.seq() == 1 ? 0 : 1);
    }
  }
  EXPECT_EQ(next, 61u);
  EXPECT_LE(acks.size(), 3u);  // one Apply (and ack) per batch of what had arrived

  const replication::ReplicaState ref = ApplyDirectly(dir_.File("ref.db"), 60);
  EXPECT_EQ(acks.back().ack.digest(), DigestBytes(ref.digest));
  EXPECT_EQ(r->position().digest, ref.digest);
  EXPECT_EQ(r->applied_seq(), 60u);
  EXPECT_TRUE(r->position().content_checksum.empty());
  r->Stop();
  EXPECT_EQ(*replication::Checksum(path), *replication::Checksum(dir_.File("ref.db")));
}

TEST_F(ReplicaTest, EntriesArrivingWithinTheApplyIntervalShareOneTransaction) {
  apply_interval_ = 1s;
  auto r = OpenReplica(dir_.File("a.db"));
  StartAndWait(*r);
  const auto start = std::chrono::steady_clock::now();
  r->Submit(5, Range(1, 1));
  WaitForAck(1);
  const auto first = std::chrono::steady_clock::now();
  EXPECT_LT(first - start, 1s);  // an idle replica applies at once
  r->Submit(5, Range(2, 2));
  r->Submit(5, Range(3, 3));
  r->Submit(5, Range(4, 4));
  auto acks = WaitForAck(4);
  const auto last = std::chrono::steady_clock::now();
  ASSERT_EQ(acks.size(), 2u);  // the three later messages went into one transaction...
  EXPECT_EQ(acks[1].ack.outcomes_size(), 3);
  EXPECT_GE(last - start, 1s);  // ...which started one interval after the first
  EXPECT_EQ(acks[1].ack.digest(), DigestBytes(ApplyDirectly(dir_.File("ref.db"), 4).digest));
}

TEST_F(ReplicaTest, AFullBatchAndStopDoNotWaitForTheApplyInterval) {
  apply_interval_ = 1h;
  auto r = OpenReplica(dir_.File("a.db"));  // max_batch 1000
  StartAndWait(*r);
  r->Submit(5, Range(1, 1));
  WaitForAck(1);
  r->Submit(5, Range(2, 1001));  // 1000 entries: a full batch goes at once
  WaitForAck(1001);
  r->Submit(5, Range(1002, 1002));  // held back for the hour...
  r->Stop();                        // ...and Stop does not wait for it
  EXPECT_EQ(r->applied_seq(), 1001u);
}

TEST_F(ReplicaTest, SkipsDuplicatesAndRefusesGapsWithAnErrorAck) {
  auto r = OpenReplica(dir_.File("a.db"));
  StartAndWait(*r);
  r->Submit(1, Range(1, 5));
  WaitForAck(5);
  r->Submit(1, Range(3, 8));  // 3..5 again, then 6..8
  auto acks = WaitForAck(8);
  ASSERT_EQ(acks.back().ack.outcomes_size(), 3);
  EXPECT_EQ(acks.back().ack.outcomes(0).seq(), 6u);
  r->Submit(1, Range(11, 12));  // 9 and 10 are missing
  acks = WaitForAck(0, /*error=*/true);
  EXPECT_EQ(acks.back().ack.applied_seq(), 8u);
  EXPECT_EQ(acks.back().ack.outcomes_size(), 0);
  EXPECT_EQ(r->applied_seq(), 8u);
  // The stream resumes once the gap is filled.
  r->Submit(1, Range(9, 12));
  WaitForAck(12);
  EXPECT_EQ(r->position().digest, ApplyDirectly(dir_.File("ref.db"), 12).digest);
}

TEST_F(ReplicaTest, ReopensAtItsStoredPosition) {
  const std::string path = dir_.File("a.db");
  {
    auto r = OpenReplica(path);
    StartAndWait(*r);
    r->Submit(1, Range(1, 20));
    WaitForAck(20);
  }
  auto again = OpenReplica(path);
  EXPECT_EQ(again->applied_seq(), 20u);
  EXPECT_EQ(again->position().digest, ApplyDirectly(dir_.File("ref.db"), 20).digest);
}

TEST_F(ReplicaTest, SecondReplicaOnTheSameFileIsRefusedAndTheFirstCarriesOn) {
  const std::string path = dir_.File("a.db");
  auto r = OpenReplica(path);
  StartAndWait(*r);
  r->Submit(1, Range(1, 5));
  WaitForAck(5);
  auto second = OpenPlain(path);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), Code::kFailedPrecondition);
  const std::string& m = second.status().message();
  EXPECT_NE(
      m.find("replica database " + path + " is in use by process " + std::to_string(::getpid())),
      std::string::npos)
      << m;
  EXPECT_NE(m.find("its own copy"), std::string::npos) << m;
  r->Submit(1, Range(6, 10));
  WaitForAck(10);
  EXPECT_EQ(r->position().digest, ApplyDirectly(dir_.File("ref.db"), 10).digest)
      << "the refused replica must not have applied or changed anything";
}

TEST_F(ReplicaTest, ContentChecksumFollowsEveryChangeBehindTheCache) {
  const std::string path = dir_.File("a.db");
  {
    auto db = store::Database::Open(path);
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE(db->Exec("CREATE TABLE t(a); INSERT INTO t VALUES(1)").ok());
  }
  std::string first;
  for (int round = 0; round < 4; ++round) {
    ready_ = false;
    auto r = OpenReplica(path);
    StartAndWait(*r);
    const std::string sum = r->position().content_checksum;
    r->Stop();
    r.reset();
    EXPECT_EQ(sum, *replication::Checksum(path)) << round;
    if (round == 0) first = sum;
    if (round == 1) {
      EXPECT_EQ(sum, first);  // unchanged content, same answer
    } else if (round >= 2) {
      EXPECT_NE(sum, first);
    }
    if (round >= 1) {
      // A write behind the replica's back (as an operator with sqlite3 would make).
      auto db = store::Database::Open(path);
      ASSERT_TRUE(db.ok());
      ASSERT_TRUE(db->Exec("INSERT INTO t VALUES(" + std::to_string(round + 10) + ")").ok());
    }
  }
}


TEST_F(ReplicaTest, InstallsASnapshotInPlaceAndCarriesOn) {
  const std::string token = SnapshotToken(TestKey());
  const std::string peer_path = dir_.File("peer.db");
  const replication::ReplicaState peer_state = ApplyDirectly(peer_path, 40);
  SnapshotPeer peer(peer_path, token);

  const std::string path = dir_.File("a.db");
  auto r = OpenReplica(path, token);
  StartAndWait(*r);
  r->Submit(1, Range(1, 3));
  WaitForAck(3);

  std::promise<Status> done;
  r->InstallSnapshot({"peer", "127.0.0.1", peer.port(), "test"},
                     [&done](Status s) { done.set_value(s); });
  auto f = done.get_future();
  ASSERT_EQ(f.wait_for(20s), std::future_status::ready);
  Status s = f.get();
  ASSERT_TRUE(s.ok()) << s.ToString();
  {
    std::lock_guard lock(mu_);
    EXPECT_EQ(events_, (std::vector<std::string>{"close", "reopen"}));
  }
  EXPECT_EQ(r->applied_seq(), 40u);
  EXPECT_EQ(r->position().digest, peer_state.digest);
  EXPECT_EQ(*replication::Checksum(path), *replication::Checksum(peer_path));
  // The stream continues from the snapshot's position.
  r->Submit(2, Range(41, 45));
  auto acks = WaitForAck(45);
  EXPECT_EQ(acks.back().session, 2u);
  EXPECT_EQ(r->position().digest, ApplyDirectly(dir_.File("ref.db"), 45).digest);
  // The database file was replaced; the replica still owns it.
  EXPECT_EQ(OpenPlain(path).status().code(), Code::kFailedPrecondition);
}

TEST_F(ReplicaTest, AFailedFetchLeavesTheDatabaseAlone) {
  const std::string peer_path = dir_.File("peer.db");
  ApplyDirectly(peer_path, 10);
  SnapshotPeer peer(peer_path, SnapshotToken(TestKey(1)));  // another cluster's key

  auto r = OpenReplica(dir_.File("a.db"), SnapshotToken(TestKey(2)));
  StartAndWait(*r);
  r->Submit(1, Range(1, 3));
  WaitForAck(3);
  std::promise<Status> done;
  r->InstallSnapshot({"peer", "127.0.0.1", peer.port(), "test"},
                     [&done](Status s) { done.set_value(s); });
  auto f = done.get_future();
  ASSERT_EQ(f.wait_for(20s), std::future_status::ready);
  Status s = f.get();
  EXPECT_EQ(s.code(), Code::kUnauthenticated) << s.ToString();
  {
    std::lock_guard lock(mu_);
    EXPECT_TRUE(events_.empty());  // the readers were never disturbed
  }
  EXPECT_EQ(r->applied_seq(), 3u);
  r->Submit(1, Range(4, 5));
  WaitForAck(5);
}

TEST(SnapshotTokenTest, IsTheHexHmacOfTheLabel) {
  const proto::ClusterKey key = TestKey(3);
  unsigned char mac[32];
  unsigned int len = 0;
  const std::string label = "vsc-snapshot-v1";
  HMAC(EVP_sha256(), key.bytes().data(), 32, reinterpret_cast<const unsigned char*>(label.data()),
       label.size(), mac, &len);
  std::string hex;
  for (unsigned i = 0; i < len; ++i) hex += fmt::format("{:02x}", mac[i]);
  EXPECT_EQ(SnapshotToken(key), hex);
  EXPECT_NE(SnapshotToken(TestKey(4)), hex);

  net::HttpRequest req;
  EXPECT_FALSE(HasBearerToken(req, hex));
  req.headers = {{"authorization", "bearer " + hex}};
  EXPECT_TRUE(HasBearerToken(req, hex));
  req.headers = {{"Authorization", "Bearer " + hex.substr(1)}};
  EXPECT_FALSE(HasBearerToken(req, hex));
  req.headers = {{"Authorization", "Basic " + hex}};
  EXPECT_FALSE(HasBearerToken(req, hex));
}

TEST(SnapshotHeadTest, ParsesTheAnnouncedStateAndRefusesBadHeads) {
  const std::string digest(64, 'a');
  const std::string body_hash = "X-Vsc-Body-Sha256: " + std::string(64, 'b') + "\r\n";
  auto h = ParseSnapshotHead("HTTP/1.1 200 OK\r\nContent-Length: 4096\r\nX-Vsc-Epoch: 2\r\n"
                             "X-Vsc-Applied-Seq: 77\r\nX-Vsc-Digest: " + digest + "\r\n" +
                             body_hash + "\r\n");
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  EXPECT_EQ(h->content_length, 4096u);
  EXPECT_EQ(h->state.epoch, 2u);
  EXPECT_EQ(h->state.applied_seq, 77u);
  EXPECT_EQ(h->state.digest[0], 0xaa);
  EXPECT_EQ(h->body_sha256[31], 0xbb);
  EXPECT_EQ(ParseSnapshotHead("HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\n\r\n").status().code(),
            Code::kUnauthenticated);
  for (const std::string& bad : std::vector<std::string>{
           std::string("HTTP/1.1 500 Oops\r\nContent-Length: 0\r\n\r\n"),
           std::string("garbage\r\n\r\n"),
           "HTTP/1.1 200 OK\r\nX-Vsc-Epoch: 2\r\nX-Vsc-Applied-Seq: 7\r\nX-Vsc-Digest: " + digest +
               "\r\n\r\n",
           "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nX-Vsc-Epoch: 2\r\nX-Vsc-Applied-Seq: x\r\n"
           "X-Vsc-Digest: " + digest + "\r\n\r\n",
           std::string("HTTP/1.1 200 OK\r\nContent-Length: 1\r\nX-Vsc-Epoch: 2\r\n"
                       "X-Vsc-Applied-Seq: 7\r\nX-Vsc-Digest: abc\r\n\r\n"),
           // no body hash, then a short one
           "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nX-Vsc-Epoch: 2\r\nX-Vsc-Applied-Seq: 7\r\n"
           "X-Vsc-Digest: " + digest + "\r\n\r\n",
           "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nX-Vsc-Epoch: 2\r\nX-Vsc-Applied-Seq: 7\r\n"
           "X-Vsc-Digest: " + digest + "\r\nX-Vsc-Body-Sha256: abc\r\n\r\n"}) {
    EXPECT_EQ(ParseSnapshotHead(bad).status().code(), Code::kDataLoss) << bad;
  }
}

}  // namespace
}  // namespace vsc::realserver

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

namespace vsc::realserver {
namespace {

using namespace std::chrono_literals;

proto::ClusterKey TestKey(uint8_t fill = 7) {
  std::array<uint8_t, 32> b;
  b.fill(fill);
  return proto::ClusterKey::FromBytes(b);
}

// Entry 1 creates the table; the others insert rows whose values depend on random() and 'now',
// so equal digests and checksums also prove the deterministic functions agree.
proto::LogEntry MakeEntry(uint64_t seq) {
  proto::LogEntry e;
  e.set_epoch(1);
  e.set_seq(seq);
  e.set_ts_micros(1'700'000'000'000'000 + static_cast<int64_t>(seq) * 1000);
  auto* s = e.add_statements();
  if (seq == 1) {
    s->set_sql("CREATE TABLE t(id INTEGER PRIMARY KEY, r INTEGER, at TEXT DEFAULT CURRENT_TIMESTAMP)");
  } else if (seq % 7 == 0) {
    s->set_sql("INSERT INTO t(id, r) VALUES(?1, random())");  // a duplicate id: fails everywhere
    s->add_params()->set_integer(2);
  } else {
    s->set_sql("INSERT INTO t(id, r) VALUES(?1, random())");
    s->add_params()->set_integer(static_cast<int64_t>(seq));
  }
  return e;
}

proto::Replicate Range(uint64_t first, uint64_t last) {
  proto::Replicate r;
  for (uint64_t s = first; s <= last; ++s) *r.add_entries() = MakeEntry(s);
  r.set_head_seq(last);
  return r;
}

// Applies entries 1..n to a fresh file with the core library alone: the reference state.
replication::ReplicaState ApplyDirectly(const std::string& path, uint64_t n) {
  auto ex = replication::OpenSqliteExecutor(path, {});
  EXPECT_TRUE(ex.ok());
  auto applier = replication::Applier::Create(std::move(ex).value());
  EXPECT_TRUE(applier.ok());
  std::vector<replication::Entry> entries;
  for (uint64_t s = 1; s <= n; ++s) entries.push_back(*EntryFromProto(MakeEntry(s)));
  EXPECT_TRUE((*applier)->Apply(entries).ok());
  return (*applier)->state();
}

// A replica without hooks, to try a second one on a file.
Result<std::unique_ptr<Replica>> OpenPlain(const std::string& path) {
  ReplicaOptions o;
  o.path = path;
  return Replica::Open(o, {});
}

class ReplicaTest : public ::testing::Test {
 protected:
  struct Ack {
    uint64_t session;
    proto::ReplicaAck ack;
  };

  std::unique_ptr<Replica> OpenReplica(const std::string& path, std::string token = "") {
    ReplicaOptions o;
    o.path = path;
    o.max_batch = 1000;
    o.snapshot_token = std::move(token);
    o.snapshot_timeout = 5s;
    ReplicaHooks h;
    h.on_ack = [this](uint64_t session, proto::ReplicaAck ack) {
      std::lock_guard lock(mu_);
      acks_.push_back({session, std::move(ack)});
      cv_.notify_all();
    };
    h.close_readers = [this] {
      std::lock_guard lock(mu_);
      events_.push_back("close");
    };
    h.reopen_readers = [this] {
      std::lock_guard lock(mu_);
      events_.push_back("reopen");
    };
    auto r = Replica::Open(o, std::move(h));
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return std::move(r).value();
  }

  void StartAndWait(Replica& r) {
    r.Start([this] {
      std::lock_guard lock(mu_);
      ready_ = true;
      cv_.notify_all();
    });
    std::unique_lock lock(mu_);
    ASSERT_TRUE(cv_.wait_for(lock, 20s, [this] { return ready_; }));
  }

  // Waits until an ack reports `seq` or an error; returns all acks so far.
  std::vector<Ack> WaitForAck(uint64_t seq, bool error = false) {
    std::unique_lock lock(mu_);
    bool ok = cv_.wait_for(lock, 20s, [&] {
      for (const auto& a : acks_) {
        if (error ? !a.ack.error().empty() : a.ack.applied_seq() >= seq) return true;
      }
      return false;
    });
    EXPECT_TRUE(ok) << "no ack for seq " << seq;
    return acks_;
  }

  test_support::TempDir dir_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Ack> acks_;
  std::vector<std::string> events_;
  bool ready_ = false;
};

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

// Serves GET /v1/snapshot of `path` on a thread, as a peer's HTTP port does.
class SnapshotPeer {
 public:
  SnapshotPeer(const std::string& path, std::string token)
      : server_(io_, asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0),
                [path, token](const net::HttpRequest& r) { return ServeSnapshot(r, path, token); }),
        guard_(io_.get_executor()) {
    EXPECT_TRUE(server_.Start().ok());
    thread_ = std::thread([this] { io_.run(); });
  }
  ~SnapshotPeer() {
    asio::post(io_, [this] { server_.Stop(); });
    guard_.reset();
    io_.stop();
    thread_.join();
  }
  uint16_t port() const { return server_.local_port(); }

 private:
  asio::io_context io_;
  net::HttpServer server_;
  asio::executor_work_guard<asio::io_context::executor_type> guard_;
  std::thread thread_;
};

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
  auto h = ParseSnapshotHead("HTTP/1.1 200 OK\r\nContent-Length: 4096\r\nX-Vsc-Epoch: 2\r\n"
                             "X-Vsc-Applied-Seq: 77\r\nX-Vsc-Digest: " + digest + "\r\n\r\n");
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  EXPECT_EQ(h->content_length, 4096u);
  EXPECT_EQ(h->state.epoch, 2u);
  EXPECT_EQ(h->state.applied_seq, 77u);
  EXPECT_EQ(h->state.digest[0], 0xaa);
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
                       "X-Vsc-Applied-Seq: 7\r\nX-Vsc-Digest: abc\r\n\r\n")}) {
    EXPECT_EQ(ParseSnapshotHead(bad).status().code(), Code::kDataLoss) << bad;
  }
}

}  // namespace
}  // namespace vsc::realserver

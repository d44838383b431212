#include "sched/persistence.h"

#include <gtest/gtest.h>

#include <map>

#include "common/random.h"
#include "sched_test_util.h"

namespace vsc::sched {
namespace {

using std::chrono::seconds;

constexpr uint32_t Ip(uint32_t a, uint32_t b, uint32_t c, uint32_t d) {
  return (a << 24) | (b << 16) | (c << 8) | d;
}

PersistenceTable Make(PersistenceOptions o) {
  auto t = PersistenceTable::Create(o);
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return std::move(t).value();
}

TEST(Persistence, OptionsAreValidated) {
  PersistenceOptions o;
  o.timeout = Duration::zero();
  EXPECT_EQ(PersistenceTable::Create(o).status().code(), Code::kInvalidArgument);
  o.timeout = seconds(1);
  o.max_entries = 0;
  EXPECT_EQ(PersistenceTable::Create(o).status().code(), Code::kInvalidArgument);
}

TEST(Persistence, NetmaskFromPrefix) {
  EXPECT_EQ(*NetmaskFromPrefix(32), 0xFFFFFFFFu);
  EXPECT_EQ(*NetmaskFromPrefix(24), 0xFFFFFF00u);
  EXPECT_EQ(*NetmaskFromPrefix(1), 0x80000000u);
  EXPECT_EQ(*NetmaskFromPrefix(0), 0u);
  EXPECT_FALSE(NetmaskFromPrefix(33).ok());
  EXPECT_FALSE(NetmaskFromPrefix(-1).ok());
}

TEST(Persistence, EntriesExpireAfterTheTimeoutAndUseRefreshesThem) {
  ManualClock clock;
  PersistenceOptions o;
  o.timeout = seconds(300);
  PersistenceTable t = Make(o);
  const uint32_t client = Ip(10, 0, 0, 1);
  EXPECT_EQ(t.Lookup(client, clock.Now()), std::nullopt);
  t.Record(client, 42, clock.Now());
  clock.Advance(seconds(299));
  EXPECT_EQ(t.Lookup(client, clock.Now()), 42u);
  t.Record(client, 42, clock.Now());  // refresh: expires 300 s from here
  clock.Advance(seconds(299));
  EXPECT_EQ(t.Lookup(client, clock.Now()), 42u);
  EXPECT_EQ(t.Expire(clock.Now()), 0u);
  clock.Advance(seconds(1));  // exactly the timeout after the last use
  EXPECT_EQ(t.Lookup(client, clock.Now()), std::nullopt);
  EXPECT_EQ(t.size(), 1u);  // still held until Expire
  EXPECT_EQ(t.Expire(clock.Now()), 1u);
  EXPECT_EQ(t.size(), 0u);
}

TEST(Persistence, NetmaskGroupsAClientNetwork) {
  TimePoint now(seconds(1));
  PersistenceOptions o;
  o.netmask = *NetmaskFromPrefix(24);
  PersistenceTable t = Make(o);
  t.Record(Ip(192, 168, 7, 1), 5, now);
  EXPECT_EQ(t.Lookup(Ip(192, 168, 7, 200), now), 5u);
  EXPECT_EQ(t.Lookup(Ip(192, 168, 8, 1), now), std::nullopt);
  t.Record(Ip(192, 168, 7, 99), 6, now);  // same network: replaces
  EXPECT_EQ(t.Lookup(Ip(192, 168, 7, 1), now), 6u);
  EXPECT_EQ(t.size(), 1u);
  t.Forget(Ip(192, 168, 7, 3));
  EXPECT_EQ(t.size(), 0u);
}

TEST(Persistence, FullTableEvictsTheLeastRecentlyUsedAfterExpiredOnes) {
  ManualClock clock;
  PersistenceOptions o;
  o.timeout = seconds(10);
  o.max_entries = 3;
  PersistenceTable t = Make(o);
  t.Record(1, 101, clock.Now());
  clock.Advance(seconds(1));
  t.Record(2, 102, clock.Now());
  clock.Advance(seconds(1));
  t.Record(3, 103, clock.Now());
  clock.Advance(seconds(1));
  t.Record(1, 101, clock.Now());  // 1 is now the most recent
  t.Record(4, 104, clock.Now());  // evicts 2
  EXPECT_EQ(t.size(), 3u);
  EXPECT_EQ(t.evictions(), 1u);
  EXPECT_EQ(t.Lookup(2, clock.Now()), std::nullopt);
  EXPECT_EQ(t.Lookup(1, clock.Now()), 101u);
  EXPECT_EQ(t.Lookup(3, clock.Now()), 103u);
  EXPECT_EQ(t.Lookup(4, clock.Now()), 104u);
  clock.Advance(seconds(9));  // 3 has expired: it makes room without an eviction
  t.Record(5, 105, clock.Now());
  EXPECT_EQ(t.evictions(), 1u);
  EXPECT_EQ(t.Lookup(3, clock.Now()), std::nullopt);
  EXPECT_EQ(t.Lookup(5, clock.Now()), 105u);
}

TEST(Persistence, AdoptedTemplatesKeepTheirExpiryAndTheExpiryOrder) {
  ManualClock clock;
  PersistenceOptions o;
  o.timeout = seconds(100);
  o.max_entries = 3;
  PersistenceTable t = Make(o);
  const TimePoint now = clock.Now();
  t.Record(1, 101, now);                    // expires at +100
  t.Adopt(2, 102, now + seconds(30), now);  // a peer's template with 30 s left
  t.Adopt(3, 103, now + seconds(60), now);
  t.Adopt(4, 104, now + seconds(101), now);  // beyond the timeout: not a template of ours
  t.Adopt(5, 105, now, now);                 // already expired
  EXPECT_EQ(t.size(), 3u);
  EXPECT_EQ(t.Lookup(2, now), 102u);
  t.Record(6, 106, now);  // full: evicts the entry closest to expiry, the adopted 2
  EXPECT_EQ(t.evictions(), 1u);
  EXPECT_EQ(t.Lookup(2, now), std::nullopt);
  EXPECT_EQ(t.Lookup(3, now), 103u);
  t.Adopt(1, 111, now + seconds(10), now);  // the peer saw client 1 last: its choice wins
  EXPECT_EQ(t.Lookup(1, now), 111u);
  clock.Advance(seconds(10));
  EXPECT_EQ(t.Expire(clock.Now()), 1u);  // 1 (adopted, 10 s) goes first, in order
  EXPECT_EQ(t.Lookup(3, clock.Now()), 103u);
  clock.Advance(seconds(50));
  EXPECT_EQ(t.Expire(clock.Now()), 1u);  // then 3 at +60; 6 lives to +100
  EXPECT_EQ(t.Lookup(6, clock.Now()), 106u);
}

// Model check against a brute-force reference over random operations.
TEST(Persistence, MatchesAReferenceModel) {
  struct ModelEntry {
    uint64_t key;
    TimePoint expiry;
    uint64_t seq;  // order of last Record, for LRU eviction
  };
  Random rng(11);
  PersistenceOptions o;
  o.timeout = seconds(20);
  o.max_entries = 8;
  o.netmask = 0xFFFFFFF0u;
  PersistenceTable t = Make(o);
  std::map<uint32_t, ModelEntry> model;
  TimePoint now(seconds(100));
  uint64_t seq = 0;
  for (int op = 0; op < 20000; ++op) {
    const uint32_t ip = static_cast<uint32_t>(rng.Uniform(256));
    const uint32_t masked = ip & o.netmask;
    switch (rng.Uniform(4)) {
      case 0: {
        const uint64_t key = rng.Uniform(5);
        t.Record(ip, key, now);
        if (!model.count(masked) && model.size() >= o.max_entries) {
          std::erase_if(model, [&](const auto& kv) { return kv.second.expiry <= now; });
          if (model.size() >= o.max_entries) {
            auto lru = std::min_element(model.begin(), model.end(), [](auto& a, auto& b) {
              return a.second.seq < b.second.seq;
            });
            model.erase(lru);
          }
        }
        model[masked] = ModelEntry{key, now + o.timeout, seq++};
        break;
      }
      case 1: {
        const size_t expected =
            std::erase_if(model, [&](const auto& kv) { return kv.second.expiry <= now; });
        ASSERT_EQ(t.Expire(now), expected);
        break;
      }
      default:
        now += std::chrono::milliseconds(rng.Uniform(3000));
    }
    auto it = model.find(masked);
    std::optional<uint64_t> want;
    if (it != model.end() && it->second.expiry > now) want = it->second.key;
    ASSERT_EQ(t.Lookup(ip, now), want) << "op " << op;
    ASSERT_EQ(t.size(), model.size()) << "op " << op;
    ASSERT_LE(t.size(), o.max_entries);
  }
}

class PickPersistentTest : public ::testing::Test {
 protected:
  PickPersistentTest()
      : sched_(testing::MakeOrDie("rr")),
        table_(Make(PersistenceOptions{})),
        backends_(testing::WithWeights({1, 1, 1})) {
    sched_->Rebuild(backends_);
  }
  std::optional<size_t> Pick(uint32_t ip) {
    return PickPersistent(table_, *sched_, backends_, Flow{ip, 1234}, clock_.Now());
  }
  ManualClock clock_;
  std::unique_ptr<Scheduler> sched_;
  PersistenceTable table_;
  std::vector<Backend> backends_;
};

TEST_F(PickPersistentTest, AClientStaysWithItsFirstServer) {
  const auto first = Pick(Ip(10, 1, 1, 1));  // rr: 0
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(Pick(Ip(10, 1, 1, 1)), first);
    EXPECT_NE(Pick(Ip(10, 2, 2, i)), std::nullopt);  // others keep rr turning
    clock_.Advance(seconds(200));                    // each use refreshes the 300 s timeout
  }
  clock_.Advance(seconds(300));
  table_.Expire(clock_.Now());
  EXPECT_EQ(table_.Lookup(Ip(10, 1, 1, 1), clock_.Now()), std::nullopt);
}

TEST_F(PickPersistentTest, UnavailableOrRemovedServerIsReplacedAndRecorded) {
  const uint32_t client = Ip(10, 1, 1, 1);
  const size_t first = *Pick(client);
  backends_[first].available = false;
  const size_t second = *Pick(client);
  EXPECT_NE(second, first);
  EXPECT_EQ(table_.Lookup(client, clock_.Now()), backends_[second].key);
  backends_[first].available = true;
  EXPECT_EQ(Pick(client), second);              // the new record holds
  backends_.erase(backends_.begin() + second);  // server removed from the view
  sched_->Rebuild(backends_);
  const auto third = Pick(client);
  ASSERT_TRUE(third);
  EXPECT_EQ(table_.Lookup(client, clock_.Now()), backends_[*third].key);
}

TEST_F(PickPersistentTest, QuiescedServerKeepsKnownClientsUnlessExpireQuiescent) {
  const uint32_t client = Ip(10, 1, 1, 1);
  const size_t first = *Pick(client);
  backends_[first].weight = 0;
  EXPECT_EQ(Pick(client), first);           // LVS default expire_quiescent_template = 0
  EXPECT_NE(Pick(Ip(10, 9, 9, 9)), first);  // but no new client goes there

  PersistenceOptions o;
  o.expire_quiescent = true;
  table_ = Make(o);
  backends_[first].weight = 1;
  const size_t again = *Pick(client);
  backends_[again].weight = 0;
  EXPECT_NE(Pick(client), again);
}

TEST_F(PickPersistentTest, NothingRecordedWhenNoServerCanTakeWork) {
  for (Backend& b : backends_) b.available = false;
  EXPECT_EQ(Pick(Ip(10, 1, 1, 1)), std::nullopt);
  EXPECT_EQ(table_.size(), 0u);
}

}  // namespace
}  // namespace vsc::sched

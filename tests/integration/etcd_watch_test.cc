// WatchKey (director/etcd_watch.h) against a real one-member etcd: a key deleted while the
// watch waits, or before it started (from an older revision), ends a delete watch; a put ends
// only a change watch; otherwise the deadline or the wake descriptor ends it; an etcd that does
// not listen, no endpoint, or no wake descriptor is an error.
#include "director/etcd_watch.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <thread>

#include "common/wake_fd.h"
#include "integration/cluster_harness.h"
#include "integration/etcd_cluster.h"
#include "support/peer_process.h"

namespace vsc::integration {
namespace {

using namespace std::chrono_literals;
using director::EtcdClient;
using director::WatchEnd;
using director::WatchFor;
using director::WatchKey;

class EtcdWatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = MakeTempDir("vsc-etcd-watch");
    auto etcd = EtcdCluster::Start(dir_, 1, 20s);
    ASSERT_TRUE(etcd.ok()) << etcd.status().ToString();
    etcd_ = std::move(*etcd);
    auto ep = director::ParseEtcdEndpoint(etcd_->ClientUrls().at(0));
    ASSERT_TRUE(ep.ok());
    endpoint_ = *ep;
  }
  void TearDown() override {
    etcd_.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  // The key under a new lease: the lease and the key's mod_revision.
  std::pair<int64_t, int64_t> PutUnderLease(EtcdClient& client, const std::string& key) {
    auto lease = client.Grant(30);
    EXPECT_TRUE(lease.ok()) << lease.status().ToString();
    auto txn = client.CreateWithLease(key, "director A", lease.ok() ? lease->id : 0);
    EXPECT_TRUE(txn.ok() && txn->succeeded && txn->kv);
    return {lease.ok() ? lease->id : 0, txn.ok() && txn->kv ? txn->kv->mod_revision : 0};
  }

  std::string dir_;
  std::unique_ptr<EtcdCluster> etcd_;
  director::EtcdEndpoint endpoint_;
  WakeFd never_;  // never signalled: the watches below end by their event or deadline
  RealClock clock_;
};

TEST_F(EtcdWatchTest, ARevokedHoldersKeyEndsTheWatchAsDeleted) {
  EtcdClient client({endpoint_}, 2s);
  const auto [lease, revision] = PutUnderLease(client, "/vscluster/w/sequencer");
  Result<WatchEnd> end = Internal("not run");
  std::thread watcher([&] {
    end = WatchKey(client, "/vscluster/w/sequencer", revision + 1, WatchFor::kDelete,
                   clock_.Now() + 20s, clock_, never_.fd());
  });
  ASSERT_TRUE(client.Revoke(lease).ok());  // etcd deletes the lease's keys
  watcher.join();
  ASSERT_TRUE(end.ok()) << end.status().ToString();
  EXPECT_EQ(*end, WatchEnd::kEvent);
  // From the older revision, the delete that already happened is reported at once.
  auto again = WatchKey(client, "/vscluster/w/sequencer", revision + 1, WatchFor::kDelete,
                        clock_.Now() + 20s, clock_, never_.fd());
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(*again, WatchEnd::kEvent);
}

TEST_F(EtcdWatchTest, WithoutTheEventAskedForTheDeadlineOrTheWakeDescriptorEndsIt) {
  EtcdClient client({endpoint_}, 2s);
  const auto [lease, revision] = PutUnderLease(client, "/vscluster/w/kept");
  // Other keys changing do not end it.
  ASSERT_TRUE(client.CreateWithLease("/vscluster/w/other", "x", lease).ok());
  const TimePoint start = clock_.Now();
  auto end = WatchKey(client, "/vscluster/w/kept", revision + 1, WatchFor::kDelete, start + 300ms,
                      clock_, never_.fd());
  ASSERT_TRUE(end.ok()) << end.status().ToString();
  EXPECT_EQ(*end, WatchEnd::kDeadline);
  EXPECT_GE(clock_.Now() - start, 300ms);
  // A put of the key itself ends a kAnyChange watch (the service table's), not a kDelete one.
  ASSERT_TRUE(client.PutIfModRevision("/vscluster/w/kept", "table 2", revision).ok());
  auto put_only = WatchKey(client, "/vscluster/w/kept", revision + 1, WatchFor::kDelete,
                           clock_.Now() + 300ms, clock_, never_.fd());
  ASSERT_TRUE(put_only.ok()) << put_only.status().ToString();
  EXPECT_EQ(*put_only, WatchEnd::kDeadline);
  auto changed = WatchKey(client, "/vscluster/w/kept", revision + 1, WatchFor::kAnyChange,
                          clock_.Now() + 20s, clock_, never_.fd());
  ASSERT_TRUE(changed.ok()) << changed.status().ToString();
  EXPECT_EQ(*changed, WatchEnd::kEvent);
  WakeFd wake;
  ASSERT_GE(wake.fd(), 0);
  wake.Signal();
  auto woken = WatchKey(client, "/vscluster/w/kept", revision + 1, WatchFor::kDelete,
                        clock_.Now() + 20s, clock_, wake.fd());
  ASSERT_TRUE(woken.ok()) << woken.status().ToString();
  EXPECT_EQ(*woken, WatchEnd::kWoken);
}

TEST_F(EtcdWatchTest, AnEtcdThatDoesNotListenOrNoWakeDescriptorIsAnError) {
  EtcdClient closed({{"127.0.0.1", test_support::FreePort("127.0.0.1")}}, 1s);
  auto end = WatchKey(closed, "/vscluster/w/sequencer", 1, WatchFor::kDelete, clock_.Now() + 5s,
                      clock_, never_.fd());
  EXPECT_FALSE(end.ok());
  // Without a descriptor to stop it with, a watch could hold a stopping thread until its
  // deadline: refused before connecting.
  EtcdClient client({endpoint_}, 2s);
  auto unstoppable = WatchKey(client, "/vscluster/w/sequencer", 1, WatchFor::kDelete,
                              clock_.Now() + 5s, clock_, -1);
  EXPECT_EQ(unstoppable.status().code(), Code::kFailedPrecondition)
      << unstoppable.status().ToString();
  EXPECT_FALSE(WatchKey(EtcdClient({}, 1s), "/k", 1, WatchFor::kDelete, clock_.Now() + 5s, clock_,
                        never_.fd())
                   .ok())
      << "no endpoint";
}

}  // namespace
}  // namespace vsc::integration

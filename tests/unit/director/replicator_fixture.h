// ReplicatorFixture: a real Replicator — its durable log and schema mirror are SQLite files in a
// TempDir, bootstrapped by MakeBootstrap — fed by FakeReplicas (testing/fake_replica.h) that
// register the way the control session does it, with a ManualClock so that time moves only when
// the test says.
//
// io_ is the replicator's control thread. ReplicatorTest polls it by hand (Poll); the tests of
// the write and read ports run it on a thread (StartLoop) and call the replicator only through
// OnLoop / WaitOnLoop, since every Replicator method belongs to that thread.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "director/control_plane.h"
#include "director/replication_wire.h"
#include "director/replicator.h"
#include "proto/auth.h"
#include "replication/replica_store.h"
#include "support/temp_dir.h"
#include "support/test_key.h"
#include "testing/fake_replica.h"
#include "unit/net/net_test_util.h"

namespace vsc::director::testing {

using vsc::testing::FakeLink;
using vsc::testing::FakeReplica;

// The cluster key of these tests, and another one (a writer or client with the wrong key).
using test_support::TestKey;
inline proto::ClusterKey OtherKey() { return TestKey(0xcc); }

class ReplicatorFixture : public ::testing::Test {
 protected:
  using WriteSlot = std::shared_ptr<std::optional<proto::WriteResponse>>;

  void SetUp() override {
    vsc::testing::MakeBootstrap(Path("boot.db"));
    auto sum = replication::Checksum(Path("boot.db"));
    ASSERT_TRUE(sum.ok()) << sum.status().ToString();
    boot_checksum_ = *sum;
    options_.log_file = Path("log.db");
    options_.schema_db = Path("boot.db");
  }
  void TearDown() override {
    StopLoop({});
    rep_.reset();
  }
  std::string Path(const std::string& name) const { return dir_.File(name); }

  void Open() {
    rep_.reset();
    auto r = Replicator::Open(io_, plane_, clock_, options_);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    rep_ = std::move(r).value();
  }

  FakeReplica MakeReplica(const std::string& id) {
    FakeReplica r;
    r.id = id;
    r.content_checksum = boot_checksum_;
    r.session = ++sessions_;
    return r;
  }

  // Registration as the control session does it, then a first heartbeat.
  Admission Join(FakeReplica& r) {
    proto::Register reg = r.Register();
    Admission a = rep_->Admit(reg);
    auto ack = plane_.OnRegister(reg, r.session, 7101, clock_.Now(), a.needs_catch_up());
    EXPECT_TRUE(ack.accepted()) << ack.reason();
    rep_->Attach(reg, a, r.link);
    plane_.OnHeartbeat(r.Heartbeat(), clock_.Now());
    return a;
  }

  // The replica's copy failed (its peer died, stalled or sent a damaged body): as the real
  // server does, it closes its session and registers again on a new one, still needing one.
  void Rejoin(FakeReplica& r) {
    rep_->Detach(r.id, r.link.get());
    plane_.OnSessionClosed(r.id, r.session, clock_.Now());
    r.session = ++sessions_;
    r.link = std::make_shared<FakeLink>();
    Join(r);
  }

  // Applies what the replica received and hands its ack to the replicator.
  void Deliver(FakeReplica& r) {
    if (auto ack = r.Apply()) rep_->OnAck(r.id, *ack);
    EXPECT_EQ(r.gaps, 0u) << "a gap in the stream to " << r.id;
  }

  // Submits one write; the answer lands in the returned slot.
  WriteSlot Write(const std::string& sql, std::vector<replication::Value> params = {}) {
    proto::WriteRequest req;
    req.set_request_id(++request_id_);
    replication::Statement st{sql, std::move(params)};
    ToProto(st, req.add_statements());
    auto slot = std::make_shared<std::optional<proto::WriteResponse>>();
    rep_->Submit(req, [slot](const proto::WriteResponse& r) { *slot = r; });
    return slot;
  }

  // Runs the posted group commit (an io_context that ran out of work must be restarted).
  void Poll() {
    io_.restart();
    io_.poll();
  }

  const ReplicaInfo* Info(const std::string& id) {
    status_ = rep_->GetStatus();
    for (const auto& i : status_.replicas) {
      if (i.id == id) return &i;
    }
    return nullptr;
  }

  // ---- io_ on a thread of its own (the write and read port tests).

  void StartLoop() { loop_ = std::make_unique<net::testing::ContextThread>(io_); }
  // Runs `last` (stopping servers), then the replicator's Stop, on the loop; ends the thread.
  void StopLoop(std::function<void()> last) {
    if (!loop_) return;
    loop_->Run([&] {
      if (last) last();
      if (rep_) rep_->Stop();
      return 0;
    });
    loop_.reset();
  }
  template <class F>
  auto OnLoop(F f) -> decltype(f()) {
    return loop_->Run(std::move(f));
  }
  // Waits (at most 10 s) until `ready`, evaluated on the loop, holds.
  bool WaitOnLoop(std::function<bool()> ready) { return net::testing::WaitOn(*loop_, ready); }

  test_support::TempDir dir_;
  std::string boot_checksum_;
  ReplicatorOptions options_;
  asio::io_context io_;
  ManualClock clock_;
  ControlPlane plane_{membership::Config{std::chrono::milliseconds(100), 2, 5}, ControlSettings{}};
  uint64_t sessions_ = 0;
  std::unique_ptr<Replicator> rep_;
  ReplicationStatus status_;
  uint64_t request_id_ = 0;
  std::unique_ptr<net::testing::ContextThread> loop_;
};

}  // namespace vsc::director::testing

// Director standby on an etcd lease (issue 11), with real processes: three `etcd` members on
// 127.0.0.1, director A with a real server (bench::LocalCluster) and director B with the same
// configuration in its own directory. Only the lease holder sequences; the other refuses writes
// with the reason; a kill -9 of the holder lets the other take over within the TTL and a
// keepalive period, under a higher epoch; real servers given both directors follow the lease to
// B; without an etcd quorum writes stop with "no quorum for the sequencer lease" while lookups
// go on; the service table lives in etcd, so a `vsc adm` change on A is B's table too and
// survives the failover.
#include "integration/director_standby_fixture.h"

namespace vsc::integration {
namespace {

using nlohmann::json;

class DirectorStandbyTest : public DirectorStandbyFixture {};

TEST_F(DirectorStandbyTest, TheStandbyRefusesWritesAndTakesOverAfterAKill9UnderAHigherEpoch) {
  ASSERT_NO_FATAL_FAILURE(StartA());
  proto::WriteResponse first = Write(cluster_->write_port());
  ASSERT_TRUE(first.ok()) << first.error();
  const uint64_t epoch_a = Epoch(cluster_->admin_port(), cluster_->admin_token());
  EXPECT_EQ(first.epoch(), epoch_a);
  EXPECT_GT(epoch_a, uint64_t{1} << 32) << "an etcd epoch, above every local one";

  ASSERT_NO_FATAL_FAILURE(StartB());
  ASSERT_TRUE(BSeesAnotherHolder()) << "B never saw A's claim";
  proto::WriteResponse refused = Write(b_.write_port);
  EXPECT_FALSE(refused.ok());
  EXPECT_TRUE(Contains(refused.error(),
                       "another director holds the sequencer lease (director "
                       "with write port 127.0.0.1:" +
                           std::to_string(cluster_->write_port())))
      << refused.error();
  EXPECT_TRUE(Write(cluster_->write_port()).ok()) << "A still sequences";

  ASSERT_TRUE(cluster_->SignalDirector(SIGKILL).ok());
  const TimePoint killed = clock_.Now();
  ASSERT_TRUE(WaitUntil([&] { return HoldsLease(b_.admin_port, b_.token); }, 10s, 10ms))
      << "B never took over";
  const Duration takeover = clock_.Now() - killed;
  // etcd expires A's lease a TTL after A's last keepalive; B claims on the key's deletion (its
  // watch), or at its next claim, every TTL / 3, when the watch is not kept.
  const Duration bound = std::chrono::milliseconds(kTtlMs + kTtlMs / 3 + 1000);
  EXPECT_LT(takeover, bound) << "took " << ToMillis(takeover) << " ms";
  std::printf("takeover after kill -9: %.0f ms (TTL %u ms)\n", ToMillis(takeover), kTtlMs);
  const uint64_t epoch_b = Epoch(b_.admin_port, b_.token);
  EXPECT_GT(epoch_b, epoch_a);
  // B holds the lease now: a write passes it and meets B's promotion, which waits for a replica
  // to say where it stands (A's real server knows only A here).
  proto::WriteResponse on_b = Write(b_.write_port);
  EXPECT_FALSE(Contains(on_b.error(), "another director holds")) << on_b.error();
  EXPECT_TRUE(Contains(on_b.error(), "promoting: learning where every replica stands"))
      << on_b.error();
}

// A stopped director (SIGTERM) revokes its lease on the way out, and the standby, watching the
// key, claims it at once: well inside the TTL a kill -9 leaves it to wait.
TEST_F(DirectorStandbyTest, AStoppedDirectorHandsTheLeaseToTheStandbyAtOnce) {
  ASSERT_NO_FATAL_FAILURE(StartA());
  ASSERT_NO_FATAL_FAILURE(StartB());
  ASSERT_TRUE(BSeesAnotherHolder());
  ASSERT_TRUE(cluster_->SignalDirector(SIGTERM).ok());
  const TimePoint stopped = clock_.Now();
  ASSERT_TRUE(WaitUntil([&] { return HoldsLease(b_.admin_port, b_.token); }, 10s, 10ms))
      << "B never took over";
  const Duration takeover = clock_.Now() - stopped;
  std::printf("takeover after SIGTERM: %.0f ms (TTL %u ms)\n", ToMillis(takeover), kTtlMs);
  EXPECT_LT(takeover, std::chrono::milliseconds(kTtlMs / 2)) << ToMillis(takeover) << " ms";
}

// Promotion: B comes up at A's control address after a kill -9 of A (as a VIP moving would
// make it), takes the lease, learns where A's replicas stand and resumes the log there: every
// write A acknowledged is kept and the next write follows them.
TEST_F(DirectorStandbyTest, ANewDirectorResumesWhereTheOldOnesReplicasStandAndLosesNoAckedWrite) {
  ASSERT_NO_FATAL_FAILURE(StartCluster([this](bench::LocalClusterOptions& o) {
    o.replication = true;
    o.real_servers = 2;
    o.director_extra_args = LeaseArgs();
  }));
  ASSERT_TRUE(WaitUntil([&] { return Sequencing(cluster_->admin_port(), cluster_->admin_token()); },
                        10s, 20ms));
  const auto before = Size7(cluster_->sql_port(), 0);
  ASSERT_TRUE(before.has_value());
  constexpr int kAcked = 20;
  const uint64_t last_seq = WriteThroughA(kAcked);
  ASSERT_FALSE(HasFailure());
  const uint16_t control = cluster_->control_port();
  ASSERT_TRUE(cluster_->SignalDirector(SIGKILL).ok());
  const TimePoint killed = clock_.Now();
  ASSERT_NO_FATAL_FAILURE(StartB(control));
  const std::optional<proto::WriteResponse> next = FirstWriteOnB();
  ASSERT_TRUE(next.has_value());
  std::printf("first write committed on B %.0f ms after the kill -9 (TTL %u ms)\n",
              ToMillis(clock_.Now() - killed), kTtlMs);
  EXPECT_EQ(next->seq(), last_seq + 1) << "the log resumes after A's last acknowledged write";
  EXPECT_GT(next->epoch(), uint64_t{1} << 32);
  // Both replicas hold every write A acknowledged, and B's.
  auto j = ExpectReplicasInSyncOnB(2);
  ASSERT_TRUE(j.has_value());
  EXPECT_TRUE(Contains((*j)["sequencer"].value("promotion", ""),
                       "the log restarts after the replicas' head seq " + std::to_string(last_seq)))
      << j->dump();
  EXPECT_EQ(Size7(b_.sql_port, next->seq()), *before + kAcked + 1);
}

// Real servers given both directors (`--director A --director B`): while A holds the lease B
// turns them away (REFUSAL_STANDBY); after a kill -9 of A they register with B once it holds the
// lease, within its promotion wait, and the log resumes after A's last acknowledged write.
TEST_F(DirectorStandbyTest, RealServersGivenBothDirectorsFollowTheLeaseToTheStandby) {
  const uint16_t b_control = test_support::FreePort("127.0.0.1");
  ASSERT_NO_FATAL_FAILURE(StartAWithServersListing(b_control));
  ASSERT_NO_FATAL_FAILURE(StartB(b_control));
  ASSERT_TRUE(BSeesAnotherHolder());
  const uint64_t last_seq = WriteThroughA(10);
  ASSERT_FALSE(HasFailure());
  auto standby = Replication(b_.admin_port, b_.token);
  ASSERT_TRUE(standby.has_value());
  EXPECT_EQ((*standby)["replicas"].size(), 0u) << "the servers stay with A while it is active";

  ASSERT_TRUE(cluster_->SignalDirector(SIGKILL).ok());
  const TimePoint killed = clock_.Now();
  const std::optional<proto::WriteResponse> next = FirstWriteOnB();
  ASSERT_TRUE(next.has_value());
  std::printf("real servers with both directors: first write on B %.0f ms after the kill -9\n",
              ToMillis(clock_.Now() - killed));
  EXPECT_EQ(next->seq(), last_seq + 1) << "the log resumes after A's last acknowledged write";
  ASSERT_TRUE(ExpectReplicasInSyncOnB(2).has_value());
  auto metrics = AdminHttpGet(b_.admin_port, "/metrics", b_.token, 2s);
  ASSERT_TRUE(metrics.ok());
  const std::string line = "vsc_registration_refusals_total{reason=\"standby\"} ";
  const size_t at = metrics->second.find(line);
  ASSERT_NE(at, std::string::npos) << metrics->second;
  EXPECT_GE(std::stoull(metrics->second.substr(at + line.size())), 1u)
      << "the servers tried B while A's key still lived, and B turned them away";
}

// The service table in etcd (issue 11): `vsc adm` on A reaches B's table through etcd; B, a
// standby, refuses a change naming A; after a kill -9 of A, B holds the lease, still has the
// service and serves it (a TCP echo through it), and its own change lands in etcd.
TEST_F(DirectorStandbyTest, TheServiceTableLivesInEtcdAndSurvivesAFailoverToTheStandby) {
  ASSERT_NO_FATAL_FAILURE(StartA());
  ASSERT_NO_FATAL_FAILURE(StartB());
  const std::string a_token = work_dir_ + "/a.token";
  std::ofstream(a_token) << cluster_->admin_token();
  const std::string b_token = work_dir_ + "/b/token";
  auto adm_a = [&](const std::vector<std::string>& args) {
    return RunAdm(work_dir_, cluster_->admin_port(), a_token, args);
  };
  auto adm_b = [&](const std::vector<std::string>& args) {
    return RunAdm(work_dir_, b_.admin_port, b_token, args);
  };
  EchoServer echo;
  const std::string vip = "127.0.0.1:" + std::to_string(test_support::FreePort("127.0.0.1"));
  const std::string dest = "127.0.0.1:" + std::to_string(echo.port());
  ASSERT_EQ(adm_a({"-A", "-t", vip, "-s", "rr"}).first, 0);
  ASSERT_EQ(adm_a({"-a", "-t", vip, "-r", dest, "-m", "-w", "3"}).first, 0);
  const TimePoint changed = clock_.Now();
  std::string on_b;
  ASSERT_TRUE(WaitUntil(
      [&] {
        on_b = adm_b({"-S", "-n"}).second;
        return Contains(on_b, "-a -t " + vip + " -r " + dest + " -m -w 3");
      },
      5s, 20ms))
      << "B never had A's change: " << on_b;
  std::printf("A's change in B's table after %.0f ms\n", ToMillis(clock_.Now() - changed));

  const std::string other = "127.0.0.1:" + std::to_string(test_support::FreePort("127.0.0.1"));
  auto [refused, why] = adm_b({"-A", "-t", other});
  EXPECT_NE(refused, 0);
  EXPECT_TRUE(Contains(why,
                       "this director is a standby; change the service table on the active "
                       "director (director with write port 127.0.0.1:" +
                           std::to_string(cluster_->write_port())))
      << why;

  ASSERT_TRUE(cluster_->SignalDirector(SIGKILL).ok());
  ASSERT_TRUE(WaitUntil([&] { return HoldsLease(b_.admin_port, b_.token); }, 10s, 10ms));
  EXPECT_TRUE(Contains(adm_b({"-S", "-n"}).second, "-a -t " + vip + " -r " + dest));
  asio::io_context io;
  std::string outcome;
  EXPECT_TRUE(WaitUntil(
      [&] {
        asio::ip::tcp::socket c(io);
        asio::error_code ec;
        c.connect({asio::ip::address_v4::loopback(),
                   static_cast<uint16_t>(std::stoi(vip.substr(vip.rfind(':') + 1)))},
                  ec);
        outcome = ec ? "no connect: " + ec.message() : Outcome(c, 2000ms);
        return outcome == "served";
      },
      10s, 50ms))
      << outcome;

  std::string answer;
  ASSERT_TRUE(WaitUntil(
      [&] {
        auto r = adm_b({"-A", "-t", other, "-s", "wlc"});
        answer = r.second;
        return r.first == 0;
      },
      10s, 50ms))
      << "B, the holder now, never took a change: " << answer;
  std::vector<director::EtcdEndpoint> endpoints;
  for (const std::string& url : etcd_->ClientUrls()) {
    endpoints.push_back(*director::ParseEtcdEndpoint(url));
  }
  director::EtcdClient etcd(endpoints, 2s);
  auto kv = etcd.Get(director::ServiceTableKey("standby-test"));
  ASSERT_TRUE(kv.ok() && kv->has_value()) << kv.status().ToString();
  EXPECT_TRUE(Contains((*kv)->value, "address = '" + other + "'")) << (*kv)->value;
  EXPECT_TRUE(Contains((*kv)->value, "address = '" + dest + "'")) << (*kv)->value;
}

TEST_F(DirectorStandbyTest, WithoutAnEtcdQuorumWritesAreRefusedAndLookupsGoOn) {
  ASSERT_NO_FATAL_FAILURE(StartA());
  ASSERT_TRUE(Write(cluster_->write_port()).ok());
  const uint64_t before = Epoch(cluster_->admin_port(), cluster_->admin_token());
  etcd_->Kill(1);
  EXPECT_TRUE(Write(cluster_->write_port()).ok()) << "one member down changes nothing";
  etcd_->Kill(2);
  const TimePoint lost = clock_.Now();
  ASSERT_TRUE(WaitUntil(
      [&] { return !Sequencing(cluster_->admin_port(), cluster_->admin_token()); }, 10s, 10ms));
  EXPECT_LT(clock_.Now() - lost, std::chrono::milliseconds(kTtlMs + 1000));
  proto::WriteResponse refused = Write(cluster_->write_port());
  EXPECT_FALSE(refused.ok());
  EXPECT_TRUE(Contains(refused.error(), "no quorum for the sequencer lease")) << refused.error();
  // Lookups do not need the sequencer.
  std::vector<int> answered = UdpRoundTrips(50, 11);
  EXPECT_EQ(answered[0], 50);
  // The quorum returns: A claims the key again, under a newer epoch.
  ASSERT_TRUE(etcd_->Restart(1).ok());
  ASSERT_TRUE(etcd_->Restart(2).ok());
  ASSERT_TRUE(WaitUntil([&] { return Sequencing(cluster_->admin_port(), cluster_->admin_token()); },
                        15s, 20ms));
  EXPECT_GT(Epoch(cluster_->admin_port(), cluster_->admin_token()), before);
  EXPECT_TRUE(Write(cluster_->write_port()).ok());
}

}  // namespace
}  // namespace vsc::integration

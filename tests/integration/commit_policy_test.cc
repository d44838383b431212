// Commit policies end to end (DESIGN §7): a director and 4 real servers as processes, some of
// them stopped with SIGSTOP (a hung host: its control session stays open, it just never acks).
// A stopped server stays counted for commits until it is DOWN, which here takes
// kDownAfter × kHeartbeatMs = 10 s, far longer than each test needs; so a write answered while
// stopped servers are still SILENT was answered by the policy, not by the failure detector.
#include <poll.h>
#include <signal.h>

#include <set>

#include "client/sql_client.h"
#include "integration/cluster_harness.h"
#include "proto/cluster_key.h"

namespace vsc::integration {
namespace {

using namespace std::chrono_literals;
using json = nlohmann::json;
namespace fs = std::filesystem;

constexpr int kReplicas = 4;
constexpr uint32_t kHeartbeatMs = 100;
constexpr uint32_t kDownAfter = 100;
constexpr Duration kDownTime = std::chrono::milliseconds(kHeartbeatMs * kDownAfter);
// How long a write that the policy must hold back is watched for an answer. Two live replicas
// ack a write in milliseconds, so a wrong policy would answer well within it.
constexpr Duration kHeldBack = 1500ms;
// How long a write the policy allows may take to be answered: well inside kDownTime, so the
// stopped servers are still counted when it is.
constexpr Duration kAnswered = kDownTime / 2;

std::string Text(const proto::WriteResponse& r) {
  return "ok " + std::to_string(r.ok()) + ", code " + std::to_string(r.code()) + ", seq " +
         std::to_string(r.seq()) + ", error '" + r.error() + "'";
}

class CommitPolicyTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { ASSERT_FALSE(SharedDbPath().empty()); }

  void TearDown() override {
    for (int i = 0; i < kReplicas && cluster_; ++i) (void)cluster_->SignalServer(i, SIGCONT);
    if (cluster_) cluster_->Stop();
    if (work_dir_.empty()) return;
    if (HasFailure()) {
      std::printf("work directory kept: %s\n", work_dir_.c_str());
    } else {
      std::error_code ec;
      fs::remove_all(work_dir_, ec);
    }
  }

  void StartCluster(const std::string& policy) {
    work_dir_ = MakeTempDir("vsc-commit-");
    bench::LocalClusterOptions o;
    o.vsc_binary = VSC_BINARY;
    o.work_dir = work_dir_;
    o.db_path = SharedDbPath();
    o.real_servers = kReplicas;
    o.heartbeat_interval_ms = kHeartbeatMs;
    o.silent_after = 2;
    o.down_after = kDownAfter;
    o.replication = true;
    o.commit_policy = policy;
    auto c = bench::LocalCluster::Start(o);
    ASSERT_TRUE(c.ok()) << c.status().ToString() << " (logs in " << work_dir_ << ")";
    cluster_ = std::move(c).value();
    auto key = proto::ClusterKey::FromFile(cluster_->key_file());
    ASSERT_TRUE(key.ok()) << key.status().ToString();
    auto w = client::WriteClient::Connect("127.0.0.1", cluster_->write_port(), *key, 10s);
    ASSERT_TRUE(w.ok()) << w.status().ToString();
    writer_.emplace(std::move(w).value());
    ASSERT_TRUE(cluster_->WaitAllActive(20s).ok());
    ASSERT_TRUE(WaitUntil([&] { return InSync() == kReplicas; }, 30s, 20ms));
  }

  // Replicas IN_SYNC at the log's head.
  int InSync() {
    auto r = AdminHttpGet(cluster_->admin_port(), "/v1/replication", cluster_->admin_token(), 2s);
    if (!r.ok() || r->first != 200) return -1;
    json rep = json::parse(r->second, nullptr, false);
    if (!rep.is_object() || !rep.contains("replicas")) return -1;
    const uint64_t head = rep["log"]["last_seq"].get<uint64_t>();
    int n = 0;
    for (const json& x : rep["replicas"]) {
      n += x["replication"] == "IN_SYNC" && x["applied_seq"].get<uint64_t>() == head;
    }
    return n;
  }

  // Stops server i and waits until none of its threads can still ack (see AllThreadsStopped).
  void Stop(int i) {
    ASSERT_TRUE(cluster_->SignalServer(i, SIGSTOP).ok());
    const pid_t pid = cluster_->server_pid(i);
    ASSERT_TRUE(WaitUntil([pid] { return AllThreadsStopped(pid); }, 5s))
        << cluster_->server_id(i) << " did not stop";
  }
  void Resume(int i) { ASSERT_TRUE(cluster_->SignalServer(i, SIGCONT).ok()); }

  // Every stopped server is still a member the policy counts (not DOWN).
  void ExpectNoneDown(const std::set<int>& stopped) {
    for (int i : stopped) {
      auto s = cluster_->ServerState(cluster_->server_id(i));
      ASSERT_TRUE(s.ok()) << s.status().ToString();
      EXPECT_NE(*s, "DOWN") << cluster_->server_id(i)
                            << " is DOWN: the test no longer tells the policy from failure "
                               "detection (raise kDownAfter)";
    }
  }

  uint64_t Send(int id) {
    auto r = writer_->Send({client::MakeStatement(
        "UPDATE resources SET node=?1 WHERE id=?2",
        {client::SqlText("policy-" + std::to_string(id)), client::SqlInt(id)})});
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : 0;
  }

  // The answer to `request_id` if it arrives within `timeout`.
  std::optional<proto::WriteResponse> AnswerWithin(uint64_t request_id, Duration timeout) {
    RealClock clock;
    const TimePoint deadline = clock.Now() + timeout;
    for (;;) {
      std::vector<proto::WriteResponse> got;
      const Status s = writer_->ReceiveAvailable(got);
      EXPECT_TRUE(s.ok()) << s.ToString();
      for (auto& r : got) {
        if (r.request_id() == request_id) return r;
      }
      const TimePoint now = clock.Now();
      if (!s.ok() || now >= deadline) return std::nullopt;
      pollfd p{writer_->fd(), POLLIN, 0};
      ::poll(
          &p, 1,
          static_cast<int>(std::chrono::ceil<std::chrono::milliseconds>(deadline - now).count()));
    }
  }

  // Sends a write and expects it answered (ok) within kAnswered.
  void ExpectCommitted(int id) {
    auto a = AnswerWithin(Send(id), kAnswered);
    ASSERT_TRUE(a.has_value()) << "write " << id << " was not answered";
    EXPECT_TRUE(a->ok()) << a->error();
    EXPECT_EQ(a->rows_changed(), 1);
  }

  // Resumes every server and expects all four replicas equal at the head again.
  void ExpectAllReplicasCatchUp() {
    for (int i = 0; i < kReplicas; ++i) Resume(i);
    EXPECT_TRUE(WaitUntil([&] { return InSync() == kReplicas; }, 20s, 20ms))
        << "the resumed replicas did not catch up";
  }

  std::unique_ptr<bench::LocalCluster> cluster_;
  std::string work_dir_;
  std::optional<client::WriteClient> writer_;
};

TEST_F(CommitPolicyTest, OneCommitsWithASingleLiveReplica) {
  ASSERT_NO_FATAL_FAILURE(StartCluster("one"));
  ASSERT_NO_FATAL_FAILURE(ExpectCommitted(11));  // all four live
  for (int i = 1; i < kReplicas; ++i) ASSERT_NO_FATAL_FAILURE(Stop(i));
  ASSERT_NO_FATAL_FAILURE(ExpectCommitted(12));
  ASSERT_NO_FATAL_FAILURE(ExpectCommitted(13));
  ExpectNoneDown({1, 2, 3});
  ExpectAllReplicasCatchUp();
}

TEST_F(CommitPolicyTest, MajorityNeedsThreeOfFour) {
  ASSERT_NO_FATAL_FAILURE(StartCluster("majority"));
  ASSERT_NO_FATAL_FAILURE(Stop(3));
  ASSERT_NO_FATAL_FAILURE(ExpectCommitted(21));  // 3 of 4 ack
  ASSERT_NO_FATAL_FAILURE(Stop(2));
  const uint64_t held = Send(22);  // 2 of 4 is no majority
  const auto early = AnswerWithin(held, kHeldBack);
  ASSERT_FALSE(early.has_value()) << "answered with only 2 of 4 replicas live: " << Text(*early);
  ExpectNoneDown({2, 3});
  ASSERT_NO_FATAL_FAILURE(Resume(2));  // the third ack arrives
  auto a = AnswerWithin(held, kAnswered);
  ASSERT_TRUE(a.has_value()) << "not answered once 3 of 4 acked";
  EXPECT_TRUE(a->ok()) << a->error();
  ExpectNoneDown({3});
  ExpectAllReplicasCatchUp();
}

TEST_F(CommitPolicyTest, AllWaitsForEveryReplicaThatIsNotDown) {
  ASSERT_NO_FATAL_FAILURE(StartCluster("all"));
  ASSERT_NO_FATAL_FAILURE(Stop(3));
  const uint64_t held = Send(31);
  const auto early = AnswerWithin(held, kHeldBack);
  ASSERT_FALSE(early.has_value()) << "answered without rs4's ack: " << Text(*early);
  ExpectNoneDown({3});
  ASSERT_NO_FATAL_FAILURE(Resume(3));
  auto a = AnswerWithin(held, kAnswered);
  ASSERT_TRUE(a.has_value()) << "not answered once every replica acked";
  EXPECT_TRUE(a->ok()) << a->error();
  ExpectAllReplicasCatchUp();
}

}  // namespace
}  // namespace vsc::integration

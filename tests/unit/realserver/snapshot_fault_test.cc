// A snapshot peer that fails mid-transfer: it dies, stalls or damages the body. A relay in front
// of a real peer (ServeSnapshot over HttpServer) passes the request on and damages the answer;
// the replica must refuse the copy, keep its database and readers as they were, carry on
// applying, and install a later snapshot from a sound peer.
#include <poll.h>
#include <sys/eventfd.h>

#include <filesystem>
#include <functional>
#include <future>

#include "common/clock.h"
#include "common/unique_fd.h"
#include "replica_fixture.h"
#include "replication/replica_store.h"

namespace vsc::realserver {
namespace {

using namespace std::chrono_literals;

enum class Fault { kDie, kStall, kCorrupt };

std::string FaultName(Fault f) {
  switch (f) {
    case Fault::kDie:
      return "Die";
    case Fault::kStall:
      return "Stall";
    case Fault::kCorrupt:
      return "Corrupt";
  }
  return "?";
}

sockaddr_in LoopbackAddr(uint16_t port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return a;
}

bool SendAll(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n <= 0) return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

// Reads until the peer closes (the snapshot request says Connection: close), or until `stop`
// returns true for what was read so far.
std::string ReadUntil(int fd, const std::function<bool(const std::string&)>& stop) {
  std::string got;
  char buf[64 * 1024];
  while (!stop(got)) {
    ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) break;
    got.append(buf, static_cast<size_t>(n));
  }
  return got;
}

// Relays each connection to the real peer at `upstream` and damages the answer. One connection
// at a time, on its own thread; a stalled connection is held open until destruction.
class FaultyPeer {
 public:
  FaultyPeer(uint16_t upstream, Fault fault)
      : upstream_(upstream), fault_(fault), stop_(::eventfd(0, EFD_CLOEXEC)) {
    listener_ = UniqueFd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_in a = LoopbackAddr(0);
    EXPECT_EQ(::bind(listener_.get(), reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
    EXPECT_EQ(::listen(listener_.get(), 4), 0);
    socklen_t len = sizeof(a);
    ::getsockname(listener_.get(), reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] { Run(); });
  }
  ~FaultyPeer() {
    const uint64_t one = 1;
    EXPECT_EQ(::write(stop_.get(), &one, sizeof(one)), 8);
    thread_.join();
  }
  uint16_t port() const { return port_; }
  // Whether the answer held the text that kCorrupt changes (set once a connection was served).
  bool corrupted() const { return corrupted_.load(); }

 private:
  void Run() {
    std::vector<UniqueFd> held;
    for (;;) {
      pollfd p[2] = {{listener_.get(), POLLIN, 0}, {stop_.get(), POLLIN, 0}};
      if (::poll(p, 2, -1) < 0 || (p[1].revents & POLLIN)) return;
      UniqueFd client(::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC));
      if (!client.valid()) continue;
      if (Serve(client.get()) == Fault::kStall) held.push_back(std::move(client));
    }
  }

  // Relays one request and sends the damaged answer; returns the fault applied.
  Fault Serve(int client) {
    const std::string request = ReadUntil(
        client, [](const std::string& s) { return s.find("\r\n\r\n") != std::string::npos; });
    UniqueFd up(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_in a = LoopbackAddr(upstream_);
    if (::connect(up.get(), reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0 ||
        !SendAll(up.get(), request)) {
      return Fault::kDie;
    }
    std::string answer = ReadUntil(up.get(), [](const std::string&) { return false; });
    const size_t body = answer.find("\r\n\r\n") + 4;
    switch (fault_) {
      case Fault::kDie:  // half the body, then the connection closes
        SendAll(client, std::string_view(answer).substr(0, body + (answer.size() - body) / 2));
        break;
      case Fault::kStall:  // half the body, then nothing more
        SendAll(client, std::string_view(answer).substr(0, body + (answer.size() - body) / 2));
        break;
      case Fault::kCorrupt: {  // every byte arrives, one of a row's text changed
        // Rows carry CURRENT_TIMESTAMP of the entries' clock: 2023-11-14 ...
        const size_t at = answer.find("2023-11-14", body);
        if (at != std::string::npos) {
          answer[at + 9] = '5';
          corrupted_ = true;
        }
        SendAll(client, answer);
        break;
      }
    }
    return fault_;
  }

  uint16_t upstream_;
  Fault fault_;
  UniqueFd stop_;
  UniqueFd listener_;
  uint16_t port_ = 0;
  std::atomic<bool> corrupted_{false};
  std::thread thread_;
};

class SnapshotFaultTest : public ReplicaTest, public ::testing::WithParamInterface<Fault> {
 protected:
  Status Install(Replica& r, uint16_t port) {
    std::promise<Status> done;
    r.InstallSnapshot({"peer", "127.0.0.1", port, "test"},
                      [&done](Status s) { done.set_value(s); });
    auto f = done.get_future();
    if (f.wait_for(20s) != std::future_status::ready)
      return Internal("the install gave no result within 20 s");
    return f.get();
  }
};

TEST_P(SnapshotFaultTest, TheInstallFailsAndChangesNothing) {
  const Fault fault = GetParam();
  const std::string token = SnapshotToken(TestKey());
  const std::string peer_path = dir_.File("peer.db");
  const replication::ReplicaState peer_state = ApplyDirectly(peer_path, 40);
  SnapshotPeer sound(peer_path, token);
  FaultyPeer faulty(sound.port(), fault);
  if (fault == Fault::kStall) snapshot_timeout_ = 500ms;  // the bound under test

  const std::string path = dir_.File("a.db");
  auto r = OpenReplica(path, token);
  StartAndWait(*r);
  r->Submit(1, Range(1, 3));
  WaitForAck(3);
  const auto checksum_before = replication::Checksum(path);
  ASSERT_TRUE(checksum_before.ok()) << checksum_before.status().ToString();
  const replication::Digest digest_before = r->position().digest;

  RealClock clock;
  const TimePoint start = clock.Now();
  const Status s = Install(*r, faulty.port());
  const Duration took = clock.Now() - start;
  ASSERT_FALSE(s.ok()) << "a damaged snapshot was installed";
  switch (fault) {
    case Fault::kDie:
      EXPECT_EQ(s.code(), Code::kUnavailable) << s.ToString();
      EXPECT_NE(s.message().find("cut short"), std::string::npos) << s.ToString();
      break;
    case Fault::kStall:
      EXPECT_EQ(s.code(), Code::kUnavailable) << s.ToString();
      EXPECT_GE(took, snapshot_timeout_) << "gave up before the read timeout";
      EXPECT_LT(took, snapshot_timeout_ + 5s) << "the read timeout did not bound the stall";
      break;
    case Fault::kCorrupt:
      ASSERT_TRUE(faulty.corrupted()) << "the relay found no row text to damage";
      EXPECT_EQ(s.code(), Code::kDataLoss) << s.ToString();
      EXPECT_NE(s.message().find("X-Vsc-Body-Sha256"), std::string::npos) << s.ToString();
      break;
  }
  {
    std::lock_guard lock(mu_);
    EXPECT_TRUE(events_.empty()) << "the readers were closed for a copy that was refused";
  }
  EXPECT_EQ(r->applied_seq(), 3u);
  EXPECT_EQ(r->position().digest, digest_before);
  const auto checksum_after = replication::Checksum(path);
  ASSERT_TRUE(checksum_after.ok()) << checksum_after.status().ToString();
  EXPECT_EQ(*checksum_after, *checksum_before) << "the replica's content changed";
  EXPECT_FALSE(std::filesystem::exists(path + ".incoming")) << "the partial copy was left behind";

  // The replica carries on, and a sound peer's snapshot installs afterwards.
  r->Submit(1, Range(4, 5));
  WaitForAck(5);
  EXPECT_EQ(r->position().digest, ApplyDirectly(dir_.File("ref.db"), 5).digest);
  const Status again = Install(*r, sound.port());
  ASSERT_TRUE(again.ok()) << again.ToString();
  EXPECT_EQ(r->applied_seq(), 40u);
  EXPECT_EQ(r->position().digest, peer_state.digest);
}

INSTANTIATE_TEST_SUITE_P(Faults, SnapshotFaultTest,
                         ::testing::Values(Fault::kDie, Fault::kStall, Fault::kCorrupt),
                         [](const auto& info) { return FaultName(info.param); });

}  // namespace
}  // namespace vsc::realserver

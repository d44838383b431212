// SnapshotServer: GET /v1/snapshot answered from its own thread with a streamed body. A large
// database is sent without the serving process holding it in memory, and the HTTP context that
// received the request keeps running other work (lookups, on a real server) meanwhile.
#include "realserver/snapshot_server.h"

#include <poll.h>
#include <sys/socket.h>

#include <fstream>
#include <future>
#include <string>

#include "common/unique_fd.h"
#include "replica_fixture.h"

namespace vsc::realserver {
namespace {

using namespace std::chrono_literals;

constexpr uint64_t kMiB = 1 << 20;

// Resident memory of this process now (VmRSS), in bytes.
uint64_t ResidentBytes() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stoull(line.substr(6)) * 1024;
  }
  return 0;
}

// A replica database of about `mib` MiB (one 1 MiB blob a row), made by the core library.
void MakeLargeReplicaDb(const std::string& path, int mib) {
  auto ex = replication::OpenSqliteExecutor(path, {});
  ASSERT_TRUE(ex.ok());
  auto applier = replication::Applier::Create(std::move(ex).value());
  ASSERT_TRUE(applier.ok());
  replication::Entry e;
  e.epoch = 1;
  e.seq = 1;
  e.statements = {{"CREATE TABLE b(id INTEGER PRIMARY KEY, v BLOB)", {}},
                  {"WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < ?1) "
                   "INSERT INTO b(v) SELECT zeroblob(1048576) FROM c",
                   {replication::Value::Int(mib)}}};
  ASSERT_TRUE((*applier)->Apply(std::span<const replication::Entry>(&e, 1)).ok());
}

UniqueFd Connect(uint16_t port) {
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(::connect(fd.get(), reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
  return fd;
}

TEST(SnapshotServerTest, ALargeSnapshotIsStreamedInBoundedMemoryWhileTheContextKeepsServing) {
  test_support::TempDir dir;
  const std::string path = dir.File("large.db");
  constexpr int kDbMiB = 64;
  MakeLargeReplicaDb(path, kDbMiB);
  const std::string token = SnapshotToken(TestKey());
  SnapshotPeer peer(path, token);
  const uint64_t rss_before = ResidentBytes();
  uint64_t rss_peak = rss_before;

  UniqueFd fd = Connect(peer.port());
  const std::string request =
      "GET /v1/snapshot HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
      "Authorization: Bearer " +
      token + "\r\n\r\n";
  ASSERT_EQ(::send(fd.get(), request.data(), request.size(), MSG_NOSIGNAL),
            static_cast<ssize_t>(request.size()));
  // Once the snapshot thread holds the request (copying, or blocked sending to this reader,
  // which reads nothing yet), work posted to the HTTP context still runs at once.
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (!peer.snapshots().serving() && std::chrono::steady_clock::now() < deadline) {
    rss_peak = std::max(rss_peak, ResidentBytes());
    ::poll(nullptr, 0, 1);
  }
  ASSERT_TRUE(peer.snapshots().serving());
  std::promise<void> ran;
  asio::post(peer.io(), [&ran] { ran.set_value(); });
  EXPECT_EQ(ran.get_future().wait_for(3s), std::future_status::ready)
      << "the HTTP context was held up while the snapshot was served";
  EXPECT_EQ(peer.snapshots().served(), 0u) << "the answer should still be in progress";

  // Now read the whole answer, watching this process's memory (both ends live here).
  std::string head;
  uint64_t body = 0, length = 0;
  char buf[64 * 1024];
  for (;;) {
    const ssize_t n = ::recv(fd.get(), buf, sizeof(buf), 0);
    if (n <= 0) break;
    rss_peak = std::max(rss_peak, ResidentBytes());
    if (length == 0) {
      head.append(buf, static_cast<size_t>(n));
      const size_t end = head.find("\r\n\r\n");
      if (end == std::string::npos) continue;
      auto parsed = ParseSnapshotHead(head.substr(0, end + 4));
      ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
      length = parsed->content_length;
      body = head.size() - end - 4;
    } else {
      body += static_cast<uint64_t>(n);
    }
  }
  EXPECT_GE(length, uint64_t{kDbMiB} * kMiB);
  EXPECT_EQ(body, length);
  // The database is 64 MiB; holding it (or a copy of it) would raise the peak by that much.
  EXPECT_LT(rss_peak - rss_before, 24 * kMiB)
      << "resident memory rose by " << (rss_peak - rss_before) / kMiB << " MiB";
}

}  // namespace
}  // namespace vsc::realserver

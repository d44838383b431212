// Fuzzes InstallSnapshot on the real server: the replica thread fetches a snapshot from a peer
// (FetchSnapshot: the answer's head, the body streamed to disk, the file checked with PRAGMA
// quick_check and its replica state compared with the announced one), then swaps it in. The
// peer is a loopback server in this process whose whole answer (head and database file) is the
// fuzz input; InstallSnapshot's host and port name it, as the director's message would.
// Invariants: an install that fails leaves the replica healthy on its old database (applied_seq
// 0, and a following Replicate batch applies); one that succeeds leaves the replica at exactly
// the state the head announced.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "fuzz_temp.h"
#include "realserver/replica.h"
#include "realserver/snapshot.h"

namespace {

using namespace std::chrono_literals;

// Answers every connection with the current answer, once the request's head has arrived.
class Peer {
 public:
  Peer() {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(a);
    if (fd_ < 0 || ::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0 ||
        ::listen(fd_, 4) != 0 || ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
      vsc::fuzz::Fail("cannot listen on loopback");
    }
    port_ = ntohs(a.sin_port);
    std::thread([this] { Serve(); }).detach();  // lives as long as the process
  }
  uint16_t port() const { return port_; }
  void SetAnswer(std::string answer) {
    std::lock_guard lock(mu_);
    answer_ = std::move(answer);
  }

 private:
  void Serve() {
    for (;;) {
      const int c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (c < 0) continue;
      std::string request;
      char buf[1024];
      while (request.find("\r\n\r\n") == std::string::npos && request.size() < 8192) {
        const ssize_t n = ::recv(c, buf, sizeof(buf), 0);
        if (n <= 0) break;
        request.append(buf, static_cast<size_t>(n));
      }
      std::string answer;
      {
        std::lock_guard lock(mu_);
        answer = answer_;
      }
      for (size_t off = 0; off < answer.size();) {
        const ssize_t n = ::send(c, answer.data() + off, answer.size() - off, MSG_NOSIGNAL);
        if (n <= 0) break;
        off += static_cast<size_t>(n);
      }
      ::shutdown(c, SHUT_RDWR);
      ::close(c);
    }
  }

  int fd_ = -1;
  uint16_t port_ = 0;
  std::mutex mu_;
  std::string answer_;
};

Peer& ThePeer() {
  static Peer* peer = new Peer;  // its thread never ends
  return *peer;
}

struct Outcome {
  std::mutex mu;
  std::condition_variable cv;
  std::optional<vsc::Status> install;
  std::optional<vsc::proto::ReplicaAck> ack;
};

vsc::proto::Replicate OneEntry() {
  vsc::proto::Replicate r;
  vsc::proto::LogEntry* e = r.add_entries();
  e->set_epoch(1);
  e->set_seq(1);
  e->add_statements()->set_sql("CREATE TABLE after_install(x)");
  return r;
}

template <typename Pred>
void Wait(Outcome& o, Pred done) {
  std::unique_lock lock(o.mu);
  if (!o.cv.wait_for(lock, 60s, done)) vsc::fuzz::Fail("the replica thread did not answer in 60 s");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string answer(reinterpret_cast<const char*>(data), size);
  ThePeer().SetAnswer(answer);
  const std::string path = vsc::fuzz::TempDir() + "/install.db";
  vsc::fuzz::RemoveDatabase(path);
  vsc::fuzz::RemoveDatabase(path + ".incoming");
  Outcome out;
  vsc::realserver::ReplicaOptions o;
  o.path = path;
  o.snapshot_timeout = 5s;
  vsc::realserver::ReplicaHooks h;
  h.on_ack = [&out](uint64_t, vsc::proto::ReplicaAck ack) {
    std::lock_guard lock(out.mu);
    out.ack = std::move(ack);
    out.cv.notify_all();
  };
  auto replica = vsc::realserver::Replica::Open(o, std::move(h));
  if (!replica.ok()) vsc::fuzz::Fail(replica.status().ToString());
  (*replica)->Start(nullptr);
  (*replica)->InstallSnapshot({"rs9", "127.0.0.1", ThePeer().port(), "fuzz"},
                              [&out](vsc::Status s) {
                                std::lock_guard lock(out.mu);
                                out.install = s;
                                out.cv.notify_all();
                              });
  Wait(out, [&] { return out.install.has_value(); });
  const vsc::realserver::ReplicaPosition pos = (*replica)->position();
  if (!pos.healthy) std::abort();
  if (out.install->ok()) {
    auto head = vsc::realserver::ParseSnapshotHead(answer.substr(0, answer.find("\r\n\r\n") + 4));
    if (!head.ok() || pos.applied_seq != head->state.applied_seq ||
        pos.digest != head->state.digest || pos.epoch != head->state.epoch) {
      std::abort();  // installed, but not the state the peer announced
    }
    return 0;
  }
  if (pos.applied_seq != 0) std::abort();  // a failed install changed the database
  (*replica)->Submit(1, OneEntry());
  Wait(out, [&] { return out.ack.has_value(); });
  if (!out.ack->error().empty() || out.ack->applied_seq() != 1) std::abort();
  return 0;
}

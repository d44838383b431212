#include "realserver/snapshot_server.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <string_view>

#include "common/unique_fd.h"
#include "realserver/snapshot.h"

namespace vsc::realserver {
namespace {

bool SendAll(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

// Sends `size` bytes of `file` from its start, kSnapshotChunk at a time.
bool SendFile(int fd, int file, uint64_t size) {
  off_t offset = 0;
  while (static_cast<uint64_t>(offset) < size) {
    const size_t want = std::min<uint64_t>(kSnapshotChunk, size - static_cast<uint64_t>(offset));
    const ssize_t n = ::sendfile(fd, file, &offset, want);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
  }
  return true;
}

}  // namespace

SnapshotServer::SnapshotServer(std::string db_path, std::string token, Duration send_timeout)
    : db_path_(std::move(db_path)), token_(std::move(token)), send_timeout_(send_timeout) {}

SnapshotServer::~SnapshotServer() { Stop(); }

void SnapshotServer::Start() {
  std::lock_guard lock(mu_);
  if (started_ || stopping_) return;
  started_ = true;
  thread_ = std::thread([this] { Run(); });
}

void SnapshotServer::Stop() {
  {
    std::lock_guard lock(mu_);
    if (stopping_) return;
    stopping_ = true;
    for (int fd : waiting_) ::close(fd);
    waiting_.clear();
    if (serving_ >= 0) ::shutdown(serving_, SHUT_RDWR);
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

uint64_t SnapshotServer::served() const {
  std::lock_guard lock(mu_);
  return served_;
}

bool SnapshotServer::serving() const {
  std::lock_guard lock(mu_);
  return serving_ >= 0;
}

net::HttpResponse SnapshotServer::Handle(const net::HttpRequest& request) {
  if (auto refusal = RefuseSnapshotRequest(request, token_)) return *std::move(refusal);
  {
    std::lock_guard lock(mu_);
    if (waiting_.size() >= kMaxWaiting) {
      return net::JsonError(503, "snapshot: " + std::to_string(kMaxWaiting) +
                                     " requests are already waiting; retry later");
    }
  }
  net::HttpResponse r;
  r.hand_over = [this](int fd) { Accept(fd); };
  return r;
}

void SnapshotServer::Accept(int fd) {
  {
    std::lock_guard lock(mu_);
    if (started_ && !stopping_) {
      waiting_.push_back(fd);
      cv_.notify_one();
      return;
    }
  }
  ::close(fd);
}

void SnapshotServer::Run() {
  for (;;) {
    int fd = -1;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [this] { return stopping_ || !waiting_.empty(); });
      if (stopping_) return;
      fd = waiting_.front();
      waiting_.pop_front();
      serving_ = fd;
    }
    Serve(fd);
    std::lock_guard lock(mu_);
    serving_ = -1;
    ::close(fd);
  }
}

void SnapshotServer::Serve(int fd) {
  // The descriptor comes from an Asio socket: non-blocking. This thread sends with a timeout.
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  const auto us = std::chrono::duration_cast<std::chrono::microseconds>(send_timeout_).count();
  timeval tv{static_cast<time_t>(us / 1'000'000), static_cast<suseconds_t>(us % 1'000'000)};
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
  auto copy = SnapshotCopy::Make(db_path_);
  if (!copy.ok()) {
    spdlog::error("GET /v1/snapshot: {}", copy.status().ToString());
    SendAll(fd, net::SerializeResponse(net::JsonError(500, copy.status().message()), false));
    return;
  }
  UniqueFd file(::open(copy->path().c_str(), O_RDONLY | O_CLOEXEC));
  const bool sent = file.valid() &&
                    SendAll(fd, net::SerializeHead(copy->Head(), copy->size(), false)) &&
                    SendFile(fd, file.get(), copy->size());
  if (!sent) {
    spdlog::warn("GET /v1/snapshot: the answer ({} bytes at seq {}) was not sent in full",
                 copy->size(), copy->state().applied_seq);
    return;
  }
  std::lock_guard lock(mu_);
  ++served_;
}

}  // namespace vsc::realserver

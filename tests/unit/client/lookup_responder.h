// In-test lookup servers on 127.0.0.1 (port 0), each running one thread until destroyed.
//
// UdpLookupResponder receives on one socket and answers from a DIFFERENT socket (another port),
// the way a real server answers a client directly in `dr` mode. It can drop the first N
// requests (to exercise retries) and send a stale answer plus garbage before each real answer.
// TcpLookupResponder serves framed lookups on any number of connections and can close each
// connection after its first answer (to exercise reconnects).
//
// The answer to id X is "found on node cg-(X % 7)" unless X % 4 == 0 (not found), so tests can
// check answers without a database. Counters are atomics, readable from the test thread.
#pragma once

#include <netinet/in.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "proto/frame.h"
#include "proto/lookup_codec.h"

namespace vsc::testing {

inline proto::LookupAnswer ExpectedAnswer(uint64_t id) {
  if (id % 4 == 0) return {id, false, ""};
  return {id, true, "cg-" + std::to_string(id % 7)};
}

// Builds the response to a decoded request into `out`; returns its size.
inline size_t AnswerRequest(const proto::LookupRequestView& req, std::span<uint8_t> out) {
  proto::ResponseWriter w(out, req.request_id(), proto::LookupStatus::kOk);
  for (size_t i = 0; i < req.count(); ++i) {
    const proto::LookupAnswer a = ExpectedAnswer(req.id(i));
    if (!w.Add(a.id, a.found, a.node).ok()) std::abort();
  }
  return w.Finish();
}

inline int BoundSocket(int type) {
  const int fd = ::socket(AF_INET, type | SOCK_CLOEXEC, 0);
  if (fd < 0) std::abort();
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) std::abort();
  return fd;
}

inline uint16_t LocalPort(int fd) {
  sockaddr_in a{};
  socklen_t len = sizeof(a);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  return ntohs(a.sin_port);
}

struct UdpResponderOptions {
  int drop_first = 0;            // requests to ignore before answering
  bool stale_before = false;     // send a wrong-id answer and a garbage datagram first
  Duration delay{0};             // hold each answer this long (answers stay concurrent)
  bool record_arrivals = false;  // keep (request_id, when it was read) of every request
};

struct TcpResponderOptions {
  bool close_after_first_answer = false;
};

class UdpLookupResponder {
 public:
  explicit UdpLookupResponder(UdpResponderOptions options = {})
      : options_(options),
        recv_fd_(BoundSocket(SOCK_DGRAM)),
        reply_fd_(BoundSocket(SOCK_DGRAM)),
        stop_fd_(::eventfd(0, EFD_CLOEXEC)) {
    // Large buffers so bursts from the load generator are not dropped by the kernel.
    const int size = 4 << 20;
    ::setsockopt(recv_fd_, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
    thread_ = std::thread([this] { Run(); });
  }
  ~UdpLookupResponder() {
    const uint64_t one = 1;
    if (::write(stop_fd_, &one, sizeof(one)) != sizeof(one)) std::abort();
    thread_.join();
    ::close(recv_fd_);
    ::close(reply_fd_);
    ::close(stop_fd_);
  }

  uint16_t port() const { return LocalPort(recv_fd_); }
  uint16_t reply_port() const { return LocalPort(reply_fd_); }
  uint64_t requests() const { return requests_.load(); }
  uint64_t answered() const { return answered_.load(); }
  struct Arrival {
    uint64_t request_id;
    TimePoint at;  // when the responder read it: after it was sent
  };
  std::vector<Arrival> arrivals() const {
    std::lock_guard<std::mutex> lock(mu_);
    return arrivals_;
  }

 private:
  struct Held {
    TimePoint due;
    sockaddr_in to;
    std::vector<uint8_t> bytes;
  };

  void Run() {
    std::array<uint8_t, 2048> in;
    std::array<uint8_t, proto::kMaxResponseSize> out;
    std::deque<Held> held;  // answers waiting for their delay, in due order
    for (;;) {
      while (!held.empty() && held.front().due <= clock_.Now()) {
        answered_.fetch_add(1);  // before sending, so a test that saw the answer sees the count
        Send(held.front().bytes.data(), held.front().bytes.size(), held.front().to);
        held.pop_front();
      }
      int wait_ms = -1;
      if (!held.empty()) {
        wait_ms = std::max(0, static_cast<int>(ToMillis(held.front().due - clock_.Now())) + 1);
      }
      pollfd p[2] = {{recv_fd_, POLLIN, 0}, {stop_fd_, POLLIN, 0}};
      if (::poll(p, 2, wait_ms) <= 0) continue;
      if (p[1].revents != 0) return;
      sockaddr_in from{};
      socklen_t len = sizeof(from);
      const ssize_t n = ::recvfrom(recv_fd_, in.data(), in.size(), MSG_DONTWAIT,
                                   reinterpret_cast<sockaddr*>(&from), &len);
      if (n <= 0) continue;
      const uint64_t seen = requests_.fetch_add(1);
      if (seen < static_cast<uint64_t>(options_.drop_first)) continue;
      auto req = proto::DecodeRequest(std::span(in.data(), static_cast<size_t>(n)));
      if (!req.ok()) continue;
      if (options_.record_arrivals) {
        std::lock_guard<std::mutex> lock(mu_);
        arrivals_.push_back({req->request_id(), clock_.Now()});
      }
      if (options_.stale_before) {
        const size_t m =
            proto::EncodeErrorResponse(req->request_id() + 1000, proto::LookupStatus::kOk, out);
        Send(out.data(), m, from);
        const uint8_t garbage[] = {'V', 'L', 9, 9};
        Send(garbage, sizeof(garbage), from);
      }
      const size_t m = AnswerRequest(*req, out);
      if (options_.delay > Duration::zero()) {
        held.push_back({clock_.Now() + options_.delay, from, {out.data(), out.data() + m}});
        continue;
      }
      answered_.fetch_add(1);
      Send(out.data(), m, from);
    }
  }
  void Send(const uint8_t* data, size_t n, const sockaddr_in& to) {
    ::sendto(reply_fd_, data, n, 0, reinterpret_cast<const sockaddr*>(&to), sizeof(to));
  }

  UdpResponderOptions options_;
  RealClock clock_;
  int recv_fd_;
  int reply_fd_;
  int stop_fd_;
  std::atomic<uint64_t> requests_{0};
  std::atomic<uint64_t> answered_{0};
  mutable std::mutex mu_;
  std::vector<Arrival> arrivals_;  // guarded by mu_
  std::thread thread_;
};

class TcpLookupResponder {
 public:
  explicit TcpLookupResponder(TcpResponderOptions options = {})
      : options_(options),
        listen_fd_(BoundSocket(SOCK_STREAM)),
        stop_fd_(::eventfd(0, EFD_CLOEXEC)) {
    if (::listen(listen_fd_, 64) != 0) std::abort();
    thread_ = std::thread([this] { Run(); });
  }
  ~TcpLookupResponder() {
    const uint64_t one = 1;
    if (::write(stop_fd_, &one, sizeof(one)) != sizeof(one)) std::abort();
    thread_.join();
    for (auto& [fd, decoder] : conns_) ::close(fd);
    ::close(listen_fd_);
    ::close(stop_fd_);
  }

  uint16_t port() const { return LocalPort(listen_fd_); }
  uint64_t answered() const { return answered_.load(); }
  uint64_t accepted() const { return accepted_.load(); }

 private:
  void Run() {
    std::array<uint8_t, 4096> in;
    std::array<uint8_t, proto::kMaxResponseSize> out;
    for (;;) {
      std::vector<pollfd> p = {{stop_fd_, POLLIN, 0}, {listen_fd_, POLLIN, 0}};
      for (auto& [fd, decoder] : conns_) p.push_back({fd, POLLIN, 0});
      if (::poll(p.data(), p.size(), -1) < 0) continue;
      if (p[0].revents != 0) return;
      if (p[1].revents != 0) {
        const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
        if (fd >= 0) {
          conns_.emplace(fd, proto::FrameDecoder(proto::kMaxLookupMessage));
          accepted_.fetch_add(1);
        }
      }
      for (size_t i = 2; i < p.size(); ++i) {
        if (p[i].revents == 0) continue;
        const int fd = p[i].fd;
        const ssize_t n = ::recv(fd, in.data(), in.size(), 0);
        bool close_it = n <= 0;
        if (!close_it) {
          auto& decoder = conns_.at(fd);
          decoder.Feed(std::span(in.data(), static_cast<size_t>(n)));
          for (;;) {
            auto frame = decoder.Next();
            if (!frame.ok()) {
              close_it = true;
              break;
            }
            if (!frame->has_value()) break;
            auto req = proto::DecodeRequest(**frame);
            if (!req.ok()) continue;
            std::vector<uint8_t> reply;
            proto::AppendFrame(reply, std::span(out.data(), AnswerRequest(*req, out)));
            answered_.fetch_add(1);  // before sending, so a test that saw the answer sees the count
            if (::send(fd, reply.data(), reply.size(), MSG_NOSIGNAL) !=
                static_cast<ssize_t>(reply.size())) {
              close_it = true;
              break;
            }
            if (options_.close_after_first_answer) {
              close_it = true;
              break;
            }
          }
        }
        if (close_it) {
          ::close(fd);
          conns_.erase(fd);
        }
      }
    }
  }

  TcpResponderOptions options_;
  int listen_fd_;
  int stop_fd_;
  std::map<int, proto::FrameDecoder> conns_;  // owned by the responder thread
  std::atomic<uint64_t> answered_{0};
  std::atomic<uint64_t> accepted_{0};
  std::thread thread_;
};

}  // namespace vsc::testing

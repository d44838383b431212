#include "bench/ring_loop.h"

#include <sys/epoll.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <random>
#include <string>

#include "bench/histogram.h"
#include "client/lookup_target.h"
#include "client/socket_wait.h"
#include "common/unique_fd.h"
#include "relay/clip_codec.h"
#include "ring/id.h"

namespace vsc::bench {
namespace {

using namespace std::chrono_literals;

// One connection: the groups its node owns, the request in flight and its answer so far.
struct Conn {
  UniqueFd fd;
  relay::FrameDecoder decoder;
  const std::vector<int>* groups = nullptr;
  uint32_t request_id = 0;
  TimePoint sent{};
  size_t clips = 0;
  bool wrong = false;  // a clip of the wrong size or a refusal in this answer
};

struct Loop {
  Loop(const LoopOptions& options, const std::vector<uint64_t>& newest_seqs, uint64_t version,
       const Clock& c)
      : o(options),
        newest(newest_seqs),
        version(version),
        clip(options.clip_bytes, 0x5a),
        clock(c) {}
  const LoopOptions& o;
  const std::vector<uint64_t>& newest;
  const uint64_t version;  // of the ring table the connections were routed with
  const std::vector<uint8_t> clip;
  const Clock& clock;
  std::mt19937_64 rng{42};
  Histogram latency;
  uint64_t errors = 0;
  std::string first_error;

  void Fail(Conn& c, const std::string& why) {
    ++errors;
    if (first_error.empty()) first_error = why;
    c.fd.Reset();
  }

  // Sends the next request on `c`: a FETCH of the newest clip of a random group of its node, or
  // a PUBLISH to one.
  void Send(Conn& c) {
    const int g = (*c.groups)[rng() % c.groups->size()];
    relay::Frame f;
    f.request_id = ++c.request_id;
    f.key = BenchGroup(g);
    f.version = version;
    if (o.publish) {
      f.type = relay::Type::kPublish;
      f.payload = clip;
    } else {
      f.type = relay::Type::kFetch;
      f.seq = newest[static_cast<size_t>(g)] - 1;
    }
    const std::vector<uint8_t> bytes = relay::EncodeFrame(f);
    c.clips = 0;
    c.wrong = false;
    c.sent = clock.Now();
    // One small frame at a time on an idle connection: the send buffer takes it whole.
    if (::send(c.fd.get(), bytes.data(), bytes.size(), MSG_NOSIGNAL) !=
        static_cast<ssize_t>(bytes.size())) {
      Fail(c, "send failed: " + std::string(std::strerror(errno)));
    }
  }

  // Reads what arrived; each complete answer is timed and followed by the next request.
  void Drain(Conn& c) {
    uint8_t buf[64 * 1024];
    for (;;) {
      const ssize_t n = ::recv(c.fd.get(), buf, sizeof buf, 0);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
      if (n <= 0) return Fail(c, "a node closed a connection");
      c.decoder.Feed(std::span<const uint8_t>(buf, static_cast<size_t>(n)));
    }
    for (;;) {
      auto f = c.decoder.Next();
      if (!f.ok()) return Fail(c, "bad framing: " + f.status().message());
      if (!f->has_value()) return;
      const relay::Frame& frame = **f;
      if (frame.request_id != c.request_id) continue;
      if (frame.type == relay::Type::kClip) {
        ++c.clips;
        c.wrong |= frame.payload.size() != o.clip_bytes;
        continue;
      }
      if (!relay::IsTerminal(frame.type)) continue;
      const bool ok = o.publish ? frame.type == relay::Type::kAck
                                : frame.type == relay::Type::kDone && c.clips == 1 && !c.wrong;
      if (ok) {
        latency.Record(static_cast<uint64_t>((clock.Now() - c.sent).count()));
      } else {
        ++errors;
        if (first_error.empty()) first_error = "a wrong answer: " + relay::PayloadText(frame);
      }
      Send(c);
      if (!c.fd.valid()) return;
    }
  }
};

}  // namespace

std::string BenchGroup(int g) { return "bench-" + std::to_string(g); }

Result<nlohmann::json> RunLoop(const ring::Ring& table, const LoopOptions& o,
                               const std::vector<uint64_t>& newest, const Clock& clock) {
  if (table.size() == 0) return Unavailable("fetch loop: the ring is empty");
  if (!o.publish && newest.size() < static_cast<size_t>(o.groups)) {
    return InvalidArgument("fetch loop: a newest seq is needed for every group");
  }
  std::vector<std::vector<int>> owned(table.size());  // groups per member
  for (int g = 0; g < o.groups; ++g) {
    owned[table.SuccessorIndex(ring::KeyId(BenchGroup(g)))].push_back(g);
  }
  Loop loop(o, newest, table.version(), clock);
  std::vector<Conn> conns(static_cast<size_t>(std::max(1, o.connections)));
  UniqueFd ep(::epoll_create1(EPOLL_CLOEXEC));
  for (size_t i = 0; i < conns.size(); ++i) {
    Conn& c = conns[i];
    const size_t node =
        table.SuccessorIndex(ring::KeyId(BenchGroup(static_cast<int>(i) % o.groups)));
    c.groups = &owned[node];
    const ring::Member& m = table.member(node);
    const bool via = o.via_port != 0;
    VSC_ASSIGN_OR_RETURN(net::SockAddr at, client::ResolveHost(via ? o.via_host : m.endpoint.host,
                                                               via ? o.via_port : m.endpoint.port));
    VSC_ASSIGN_OR_RETURN(c.fd, client::ConnectTcp(at, clock.Now() + 5s, clock));
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = i;
    ::epoll_ctl(ep.get(), EPOLL_CTL_ADD, c.fd.get(), &ev);
  }
  const TimePoint begin = clock.Now();
  const TimePoint end = begin + std::chrono::microseconds(static_cast<int64_t>(o.duration_s * 1e6));
  for (Conn& c : conns) loop.Send(c);
  epoll_event events[256];
  while (clock.Now() < end) {
    const int n = ::epoll_wait(ep.get(), events, 256, 20);
    for (int k = 0; k < n; ++k) {
      Conn& c = conns[events[k].data.u64];
      if (c.fd.valid()) loop.Drain(c);
    }
  }
  const double seconds = std::chrono::duration<double>(clock.Now() - begin).count();
  nlohmann::json j = {{"connections", conns.size()},
                      {"requests", loop.latency.Count()},
                      {"errors", loop.errors},
                      {"mean_us", loop.latency.Mean() / 1000.0},
                      {"p50_us", loop.latency.Percentile(50) / 1000.0},
                      {"p99_us", loop.latency.Percentile(99) / 1000.0},
                      {"requests_per_s", seconds > 0 ? loop.latency.Count() / seconds : 0}};
  if (!loop.first_error.empty()) j["first_error"] = loop.first_error;
  return j;
}

}  // namespace vsc::bench

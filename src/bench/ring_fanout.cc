#include "bench/ring_fanout.h"

#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <latch>
#include <thread>
#include <vector>

#include "bench/histogram.h"
#include "client/lookup_target.h"
#include "client/socket_wait.h"
#include "common/big_endian.h"
#include "relay/clip_codec.h"

namespace vsc::bench {
namespace {

using namespace std::chrono_literals;

// A clip: its send time (steady clock, ns, big endian), then 1 when measured (0: warm-up).
constexpr size_t kHeader = 9;

std::string GroupName(int g) { return "fanout-" + std::to_string(g); }

// Descriptors this process may open: at least `needed`, raising the soft limit if it must.
Status EnsureDescriptors(uint64_t needed) {
  rlimit lim{};
  if (::getrlimit(RLIMIT_NOFILE, &lim) != 0) return IoError("getrlimit(RLIMIT_NOFILE) failed");
  if (lim.rlim_cur >= needed) return Status::Ok();
  if (lim.rlim_max >= needed) {
    lim.rlim_cur = needed;
    if (::setrlimit(RLIMIT_NOFILE, &lim) == 0) return Status::Ok();
  }
  return ResourceExhausted("the fan-out step needs " + std::to_string(needed) +
                           " file descriptors (one per subscriber) but this process may open " +
                           std::to_string(lim.rlim_max) +
                           "; raise `ulimit -n` or pass a smaller --fanout-subscribers");
}

// One subscription: its socket and the bytes not yet decoded.
struct Subscriber {
  UniqueFd fd;
  relay::FrameDecoder decoder;
  bool held = false;
};

// The subscriptions of one epoll thread and what they measured.
struct Shard {
  std::vector<Subscriber> subs;
  Histogram latency;
  std::atomic<uint64_t> deliveries{0};  // measured ones; read by the main thread
  uint64_t errors = 0;                  // refusals, MOVED, broken connections
  std::string first_error;
};

Status Subscribe(const ring::Ring& table, int group, const Clock& clock, Subscriber& s) {
  const ring::Member& owner = table.Owner(GroupName(group));
  VSC_ASSIGN_OR_RETURN(net::SockAddr at,
                       client::ResolveHost(owner.endpoint.host, owner.endpoint.port));
  VSC_ASSIGN_OR_RETURN(s.fd, client::ConnectTcp(at, clock.Now() + 5s, clock));
  relay::Frame f;
  f.type = relay::Type::kSubscribe;
  f.request_id = 1;
  f.key = GroupName(group);
  f.version = table.version();
  const std::vector<uint8_t> bytes = relay::EncodeFrame(f);
  // A fresh socket's send buffer takes a frame of a few dozen bytes whole.
  if (::send(s.fd.get(), bytes.data(), bytes.size(), MSG_NOSIGNAL) !=
      static_cast<ssize_t>(bytes.size())) {
    return Unavailable("subscribe to " + owner.name + ": send failed");
  }
  return Status::Ok();
}

// Reads every clip that arrived on one subscription; records the measured ones.
void Drain(Shard& shard, Subscriber& s, const Clock& clock) {
  uint8_t buf[64 * 1024];
  for (;;) {
    const ssize_t n = ::recv(s.fd.get(), buf, sizeof buf, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    if (n <= 0) {
      ++shard.errors;
      if (shard.first_error.empty()) shard.first_error = "a node closed a subscription";
      s.fd.Reset();
      return;
    }
    s.decoder.Feed(std::span<const uint8_t>(buf, static_cast<size_t>(n)));
  }
  const int64_t now = clock.Now().time_since_epoch().count();
  for (;;) {
    auto f = s.decoder.Next();
    if (!f.ok() || !f->has_value()) break;
    const relay::Frame& frame = **f;
    if (frame.type != relay::Type::kClip || frame.payload.size() < kHeader) {
      ++shard.errors;
      if (shard.first_error.empty()) shard.first_error = relay::PayloadText(frame);
      continue;
    }
    s.held = true;
    const int64_t sent = static_cast<int64_t>(GetBigEndian(frame.payload.data(), 8));
    if (frame.payload[8] == 0) continue;  // a warm-up clip
    shard.latency.Record(static_cast<uint64_t>(std::max<int64_t>(0, now - sent)));
    ++shard.deliveries;
  }
}

// One epoll thread: subscribes its share, counts itself ready, then reads until `stop`.
void ShardLoop(const ring::Ring& table, const FanoutOptions& o, int index, const Clock& clock,
               std::latch& ready, const std::atomic<bool>& stop, Shard& shard) {
  UniqueFd ep(::epoll_create1(EPOLL_CLOEXEC));
  shard.subs.reserve(static_cast<size_t>(o.subscribers / o.threads + 1));
  for (int i = index; i < o.subscribers; i += o.threads) {
    Subscriber& s = shard.subs.emplace_back();
    if (Status st = Subscribe(table, i % o.groups, clock, s); !st.ok()) {
      ++shard.errors;
      if (shard.first_error.empty()) shard.first_error = st.ToString();
      continue;
    }
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = shard.subs.size() - 1;
    ::epoll_ctl(ep.get(), EPOLL_CTL_ADD, s.fd.get(), &ev);
  }
  ready.count_down();
  epoll_event events[256];
  while (!stop) {
    const int n = ::epoll_wait(ep.get(), events, 256, 20);
    for (int k = 0; k < n; ++k) {
      Subscriber& s = shard.subs[events[k].data.u64];
      if (s.fd.valid()) Drain(shard, s, clock);
    }
  }
}

// Talker `index` of `o.threads`: one clip per second to each of its groups (g % threads ==
// index) for 1 + duration seconds, spread over the second; the first round is warm-up. Counts
// the measured publishes acked per group in acked[g] (its groups only).
void Talk(const client::RingClientOptions& ring, const FanoutOptions& o, int index, TimePoint start,
          const Clock& clock, std::vector<uint64_t>& acked, std::atomic<uint64_t>& errors) {
  client::RingClientOptions po = ring;
  po.mode = client::RingMode::kPrefetch;
  client::RingClient c(po, clock);
  const int rounds = 1 + static_cast<int>(o.duration_s + 0.5);
  const Duration second = std::chrono::duration_cast<Duration>(1s);
  for (int r = 0; r < rounds; ++r) {
    for (int g = index; g < o.groups; g += o.threads) {
      // The talker's pace, not a wait for a condition.
      std::this_thread::sleep_until(start + r * second + g * (second / o.groups));
      std::vector<uint8_t> clip;
      PutBigEndian(clip, static_cast<uint64_t>(clock.Now().time_since_epoch().count()), 8);
      clip.push_back(r > 0 ? 1 : 0);
      clip.resize(std::max(kHeader, o.clip_bytes));
      if (!c.Publish(GroupName(g), std::move(clip)).ok()) {
        ++errors;
      } else if (r > 0) {
        ++acked[g];
      }
    }
  }
}

}  // namespace

Result<nlohmann::json> RunFanout(const client::RingClientOptions& ring, const FanoutOptions& o,
                                 const Clock& clock, const ScenarioLog& log) {
  if (o.subscribers < 1 || o.groups < 1 || o.threads < 1) {
    return InvalidArgument("fan-out: subscribers, groups and threads must be at least 1");
  }
  VSC_RETURN_IF_ERROR(EnsureDescriptors(static_cast<uint64_t>(o.subscribers) + 256));
  client::RingClient probe(ring, clock);
  VSC_ASSIGN_OR_RETURN(std::shared_ptr<const ring::Ring> table, probe.RefreshTable());
  log("ring bench: fan-out, " + std::to_string(o.subscribers) + " subscribers over " +
      std::to_string(o.groups) + " groups and " + std::to_string(table->size()) + " nodes");
  std::vector<Shard> shards(o.threads);
  std::latch ready(o.threads);
  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < o.threads; ++t) {
    threads.emplace_back(ShardLoop, std::cref(*table), std::cref(o), t, std::cref(clock),
                         std::ref(ready), std::cref(stop), std::ref(shards[t]));
  }
  const TimePoint connect_start = clock.Now();
  ready.wait();  // every shard counts down once its subscribes succeeded or failed
  const double connect_s = ToSeconds(clock.Now() - connect_start);
  // The talkers, as many as the epoll threads: a publish waits for its copies (a few ms under
  // load), so one talker alone could not keep one publish per group per second.
  std::atomic<uint64_t> publish_errors{0};
  std::vector<uint64_t> acked(o.groups, 0);
  {
    std::vector<std::thread> talkers;
    const TimePoint start = clock.Now();
    for (int t = 0; t < o.threads; ++t) {
      talkers.emplace_back([&, t] { Talk(ring, o, t, start, clock, acked, publish_errors); });
    }
    for (auto& t : talkers) t.join();
  }
  // Subscribers per group, as subscriber i listens to group i % groups.
  uint64_t expected = 0, publishes = 0;
  for (int g = 0; g < o.groups; ++g) {
    const uint64_t listeners = o.subscribers / o.groups + (g < o.subscribers % o.groups ? 1 : 0);
    expected += listeners * acked[g];
    publishes += acked[g];
  }
  // The last clips' deliveries (a lost one ends the wait after 2 s).
  auto delivered = [&] {
    uint64_t n = 0;
    for (const Shard& s : shards) n += s.deliveries;
    return n;
  };
  const TimePoint deadline = clock.Now() + 2s;
  while (delivered() < expected && clock.Now() < deadline) std::this_thread::sleep_for(5ms);
  stop = true;
  for (auto& t : threads) t.join();
  Histogram all;
  uint64_t deliveries = 0, errors = publish_errors.load(), held = 0;
  std::string first_error;
  for (const Shard& s : shards) {
    all.Merge(s.latency);
    deliveries += s.deliveries;
    errors += s.errors;
    for (const Subscriber& sub : s.subs) held += sub.held;
    if (first_error.empty()) first_error = s.first_error;
  }
  return nlohmann::json{{"subscribers", o.subscribers},
                        {"held", held},
                        {"groups", o.groups},
                        {"connect_s", connect_s},
                        {"publishes", publishes},
                        {"expected_deliveries", expected},
                        {"deliveries", deliveries},
                        {"lost", expected > deliveries ? expected - deliveries : 0},
                        {"errors", errors},
                        {"first_error", first_error},
                        {"mean_us", all.Mean() / 1000.0},
                        {"p50_us", all.Percentile(50) / 1000.0},
                        {"p99_us", all.Percentile(99) / 1000.0},
                        {"max_us", all.Max() / 1000.0}};
}

}  // namespace vsc::bench

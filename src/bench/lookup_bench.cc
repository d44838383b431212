#include "bench/lookup_bench.h"

#include <poll.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "bench/histogram.h"
#include "bench/lookup_channel.h"
#include "bench/worker_threads.h"
#include "client/lookup_target.h"
#include "common/random.h"
#include "proto/lookup_codec.h"

namespace vsc::bench {
namespace {

// Counters a worker publishes for the progress thread. Written by one worker, read by the
// progress thread; relaxed atomics because each counter is only a running total.
struct alignas(64) WorkerCounters {
  std::atomic<uint64_t> sent{0}, answered{0}, lost{0}, errors{0}, send_failures{0}, stale{0},
      lookups{0}, found{0}, in_flight{0};
  std::atomic<uint64_t> latency_sum_ns{0}, latency_count{0};  // ok answers, for the mean
};

Duration SendingPeriod(const LookupBenchOptions& o) {
  return Duration(static_cast<int64_t>(o.duration_s * 1e9));
}

struct Pending {
  TimePoint intended;
  uint8_t count;
};

// One worker thread: owns its channel, its random stream, its pending table and its histogram.
class Worker {
 public:
  Worker(int index, const LookupBenchOptions& options, std::unique_ptr<LookupChannel> channel,
         const Clock& clock)
      : index_(index),
        options_(options),
        channel_(std::move(channel)),
        clock_(clock),
        rng_(options.seed * 0x9e3779b97f4a7c15ULL + static_cast<uint64_t>(index) + 1),
        on_answer_([this](std::span<const uint8_t> bytes) { OnAnswer(bytes); }) {}

  WorkerCounters& counters() { return counters_; }
  const Histogram& histogram() const { return histogram_; }
  const Status& failure() const { return failure_; }

  void Run(TimePoint start, TimePoint end) {
    const bool open_loop = options_.rate > 0;
    Duration interval{0};
    TimePoint next_send = start;
    if (open_loop) {
      const OpenLoopSchedule schedule = OpenLoopScheduleOf(options_, index_);
      interval = schedule.interval;
      next_send = start + schedule.first;
    }
    for (;;) {
      TimePoint now = clock_.Now();
      if (open_loop) {
        // Every slot before the end, late ones too (past the end if the worker ran late there).
        while (next_send <= now && next_send < end) {
          SendOne(next_send, now);
          next_send += interval;
        }
      } else if (now < end && pending_.empty()) {
        SendOne(now, now);
      }
      if (now >= end && pending_.empty()) break;
      Expire(now);
      // Wake for the next scheduled send, the oldest deadline, or the end of the sending period.
      TimePoint wake = now + std::chrono::milliseconds(100);
      if (now < end) {
        wake = std::min(wake, end);
        if (open_loop) wake = std::min(wake, next_send);
        // Closed loop with nothing outstanding means the last send failed; retry shortly.
        if (!open_loop && pending_.empty()) wake = std::min(wake, now + std::chrono::milliseconds(1));
      }
      if (!deadlines_.empty()) wake = std::min(wake, deadlines_.front().second);
      WaitAndReceive(std::max(wake - now, Duration::zero()));
    }
  }

 private:
  void SendOne(TimePoint intended, TimePoint now) {
    proto::LookupRequest req;
    req.request_id = (static_cast<uint64_t>(index_) << 40) | ++seq_;
    const int span = options_.max_ids - options_.min_ids + 1;
    req.count = static_cast<uint8_t>(options_.min_ids + static_cast<int>(rng_.Uniform(span)));
    for (size_t i = 0; i < req.count; ++i) req.ids[i] = 1 + rng_.Uniform(options_.max_id);
    std::array<uint8_t, proto::kMaxRequestSize> buf;
    const size_t n = proto::EncodeRequest(req, buf);
    Status st = channel_->Send(std::span(buf.data(), n));
    if (!st.ok()) {
      counters_.send_failures.fetch_add(1, std::memory_order_relaxed);
      if (failure_.ok()) failure_ = st;
      return;
    }
    pending_.emplace(req.request_id, Pending{intended, req.count});
    // Timeouts run from the actual send, latency from the intended send: a late send is not lost
    // for being late, but its lateness counts against the latency.
    deadlines_.emplace_back(req.request_id, now + options_.timeout);
    counters_.sent.fetch_add(1, std::memory_order_relaxed);
    counters_.in_flight.store(pending_.size(), std::memory_order_relaxed);
  }

  void Expire(TimePoint now) {
    while (!deadlines_.empty() && deadlines_.front().second <= now) {
      if (pending_.erase(deadlines_.front().first) == 1) {
        counters_.lost.fetch_add(1, std::memory_order_relaxed);
      }
      deadlines_.pop_front();
    }
    counters_.in_flight.store(pending_.size(), std::memory_order_relaxed);
  }

  void WaitAndReceive(Duration wait) {
    const int fd = channel_->fd();
    pollfd p{fd, static_cast<short>(POLLIN | (channel_->WantsWrite() ? POLLOUT : 0)), 0};
    const timespec ts{static_cast<time_t>(wait.count() / 1'000'000'000),
                      static_cast<long>(wait.count() % 1'000'000'000)};
    const int rc = ::ppoll(&p, fd >= 0 ? 1 : 0, &ts, nullptr);
    if (rc <= 0) return;
    Status st = channel_->Poll(p.revents, on_answer_);
    if (!st.ok() && failure_.ok()) failure_ = st;
  }

  void OnAnswer(std::span<const uint8_t> bytes) {
    const TimePoint now = clock_.Now();
    auto resp = proto::DecodeResponse(bytes);
    if (!resp.ok()) {
      counters_.stale.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    auto it = pending_.find(resp->request_id);
    if (it == pending_.end()) {  // answered already, timed out, or never ours
      counters_.stale.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    const Pending p = it->second;
    pending_.erase(it);
    counters_.answered.fetch_add(1, std::memory_order_relaxed);
    if (resp->status != proto::LookupStatus::kOk || resp->answers.size() != p.count) {
      counters_.errors.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    const uint64_t ns = static_cast<uint64_t>(std::max<int64_t>(0, (now - p.intended).count()));
    histogram_.Record(ns);
    counters_.latency_sum_ns.fetch_add(ns, std::memory_order_relaxed);
    counters_.latency_count.fetch_add(1, std::memory_order_relaxed);
    counters_.lookups.fetch_add(p.count, std::memory_order_relaxed);
    uint64_t found = 0;
    for (const auto& a : resp->answers) found += a.found ? 1 : 0;
    counters_.found.fetch_add(found, std::memory_order_relaxed);
  }

  const int index_;
  const LookupBenchOptions& options_;
  std::unique_ptr<LookupChannel> channel_;
  const Clock& clock_;
  Random rng_;
  const LookupChannel::AnswerFn on_answer_;
  uint64_t seq_ = 0;
  std::unordered_map<uint64_t, Pending> pending_;
  // (request_id, deadline) in send order; deadlines are non-decreasing because the timeout is
  // constant, so expiry only ever looks at the front.
  std::deque<std::pair<uint64_t, TimePoint>> deadlines_;
  Histogram histogram_;
  WorkerCounters counters_;
  Status failure_;
};

struct Totals {
  uint64_t sent = 0, answered = 0, lost = 0, errors = 0, send_failures = 0, stale = 0,
           lookups = 0, found = 0, in_flight = 0, latency_sum_ns = 0, latency_count = 0;
};

Totals Sum(const std::vector<std::unique_ptr<Worker>>& workers) {
  Totals t;
  for (const auto& w : workers) {
    const WorkerCounters& c = w->counters();
    t.sent += c.sent.load(std::memory_order_relaxed);
    t.answered += c.answered.load(std::memory_order_relaxed);
    t.lost += c.lost.load(std::memory_order_relaxed);
    t.errors += c.errors.load(std::memory_order_relaxed);
    t.send_failures += c.send_failures.load(std::memory_order_relaxed);
    t.stale += c.stale.load(std::memory_order_relaxed);
    t.lookups += c.lookups.load(std::memory_order_relaxed);
    t.found += c.found.load(std::memory_order_relaxed);
    t.in_flight += c.in_flight.load(std::memory_order_relaxed);
    t.latency_sum_ns += c.latency_sum_ns.load(std::memory_order_relaxed);
    t.latency_count += c.latency_count.load(std::memory_order_relaxed);
  }
  return t;
}

nlohmann::json ProgressJson(const ProgressLine& p) {
  return {{"elapsed_s", p.elapsed_s},       {"sent", p.sent},
          {"answered", p.answered},         {"lost", p.lost},
          {"errors", p.errors},             {"in_flight", p.in_flight},
          {"requests_per_s", p.requests_per_s}, {"lookups_per_s", p.lookups_per_s},
          {"mean_us", p.mean_us}};
}

}  // namespace

Status CheckLookupBenchOptions(const LookupBenchOptions& o) {
  VSC_RETURN_IF_ERROR(client::ParseLookupTarget(o.target).status());
  if (!(o.duration_s > 0) || o.duration_s > 86400) {
    return InvalidArgument("duration must be between 0 and 86400 seconds");
  }
  if (o.concurrency < 1 || o.concurrency > 4096) {
    return InvalidArgument("concurrency must be 1..4096");
  }
  if (o.min_ids < 1 || o.max_ids > static_cast<int>(proto::kMaxLookupIds) ||
      o.min_ids > o.max_ids) {
    return InvalidArgument("ids per request must be a range within 1-10 (e.g. --ids 1-10)");
  }
  if (o.max_id < 1) return InvalidArgument("max id must be at least 1");
  if (o.rate < 0 || !std::isfinite(o.rate)) return InvalidArgument("rate must be 0 or positive");
  if (o.rate > 0 && o.rate / o.concurrency > 1e9) {
    return InvalidArgument("rate per worker above 1e9 requests/s; add workers");
  }
  if (o.timeout <= Duration::zero()) return InvalidArgument("timeout must be positive");
  return Status::Ok();
}

OpenLoopSchedule OpenLoopScheduleOf(const LookupBenchOptions& o, int index) {
  const double per_worker = o.rate / o.concurrency;
  OpenLoopSchedule s;
  s.interval = Duration(static_cast<int64_t>(1e9 / per_worker));
  // Staggered so the workers' sends interleave instead of bursting together.
  s.first = s.interval * index / o.concurrency;
  return s;
}

uint64_t ScheduledSends(const LookupBenchOptions& o) {
  const Duration period = SendingPeriod(o);
  uint64_t n = 0;
  for (int i = 0; i < o.concurrency; ++i) {
    const OpenLoopSchedule s = OpenLoopScheduleOf(o, i);
    if (s.first >= period) continue;
    n += static_cast<uint64_t>((period - s.first - Duration(1)) / s.interval) + 1;
  }
  return n;
}

std::string ProgressLine::ToString() const {
  return fmt::format(
      "{:6.1f} s  sent {:>9}  answered {:>9} ({:>8.0f}/s, {:>9.0f} lookups/s)  lost {:>6}  "
      "errors {:>5}  in flight {:>5}  mean {:>8.1f} us",
      elapsed_s, sent, answered, requests_per_s, lookups_per_s, lost, errors, in_flight, mean_us);
}

std::string LookupBenchReport::Warning() const {
  // Below a few hundred ids the share says little; above half not found is no accident.
  if (lookups < 200 || found * 2 >= lookups) return "";
  const double missing_pct = 100.0 * static_cast<double>(lookups - found) /
                             static_cast<double>(lookups);
  return fmt::format(
      "{:.0f} % of the ids looked up were not found: the service's database probably holds "
      "fewer than --max-id {} records, so these figures measure misses; pass --max-id with "
      "the number of records it was loaded with (vsc loaddb --records)",
      missing_pct, max_id);
}

std::string LookupBenchReport::ToJson() const {
  nlohmann::json progress_json = nlohmann::json::array();
  for (const auto& p : progress) progress_json.push_back(ProgressJson(p));
  nlohmann::json j = {
      {"benchmark", "lookup"},
      {"options",
       {{"target", target},
        {"duration_s", duration_s},
        {"concurrency", concurrency},
        {"rate", rate},
        {"mode", rate > 0 ? "open" : "closed"},
        {"min_ids", min_ids},
        {"max_ids", max_ids},
        {"max_id", max_id},
        {"seed", seed},
        {"timeout_ms", timeout_ms}}},
      {"counts",
       {{"sent", sent},
        {"answered", answered},
        {"lost", lost},
        {"errors", errors},
        {"send_failures", send_failures},
        {"stale", stale},
        {"lookups", lookups},
        {"found", found}}},
      {"first_error", first_error},
      {"warning", Warning()},
      {"requests_per_s", requests_per_s},
      {"lookups_per_s", lookups_per_s},
      {"loss_pct", loss_pct},
      {"latency_us",
       {{"p50", p50_us},
        {"p90", p90_us},
        {"p99", p99_us},
        {"p99.9", p999_us},
        {"max", max_us},
        {"mean", mean_us}}},
      {"progress", progress_json}};
  return j.dump(2);
}

std::string LookupBenchReport::SummaryTable() const {
  std::string mode = rate > 0 ? fmt::format("open loop, {:.0f} req/s", rate) : "closed loop";
  std::string out;
  auto row = [&out](std::string_view name, const std::string& value) {
    out += fmt::format("  {:<16} {}\n", name, value);
  };
  row("target", target);
  row("mode", fmt::format("{}, {} workers, {}-{} ids/request, timeout {:.0f} ms", mode,
                          concurrency, min_ids, max_ids, timeout_ms));
  row("duration", fmt::format("{:.1f} s", duration_s));
  row("sent", std::to_string(sent));
  row("answered", std::to_string(answered));
  row("lost", fmt::format("{} ({:.3f} %)", lost, loss_pct));
  row("error answers", std::to_string(errors));
  if (send_failures > 0) row("send failures", std::to_string(send_failures));
  if (stale > 0) row("stale answers", std::to_string(stale));
  if (!first_error.empty()) row("first error", first_error);
  row("requests/s", fmt::format("{:.1f}", requests_per_s));
  row("lookups/s", fmt::format("{:.1f} ({} ids found of {})", lookups_per_s, found, lookups));
  row("latency (us)", fmt::format("p50 {:.1f}  p90 {:.1f}  p99 {:.1f}  p99.9 {:.1f}  max {:.1f}  "
                                  "mean {:.1f}",
                                  p50_us, p90_us, p99_us, p999_us, max_us, mean_us));
  return out;
}

Result<LookupBenchReport> RunLookupBench(const LookupBenchOptions& options, const Clock& clock,
                                         const std::function<void(const ProgressLine&)>& progress) {
  VSC_RETURN_IF_ERROR(CheckLookupBenchOptions(options));
  VSC_ASSIGN_OR_RETURN(client::LookupTarget target, client::ParseLookupTarget(options.target));
  VSC_ASSIGN_OR_RETURN(net::SockAddr addr, client::ResolveHost(target.host, target.port));

  // Every socket is opened before the clock starts, so a refused TCP target fails fast.
  std::vector<std::unique_ptr<Worker>> workers;
  for (int i = 0; i < options.concurrency; ++i) {
    auto channel = LookupChannel::Open(target.transport, addr, options.timeout, clock);
    if (!channel.ok()) return channel.status().Annotate("bench lookup " + target.ToString());
    workers.push_back(std::make_unique<Worker>(i, options, std::move(channel).value(), clock));
  }

  const Duration period = SendingPeriod(options);
  const TimePoint start = clock.Now();
  const TimePoint end = start + period;
  WorkerThreads threads;
  threads.Start(workers, start, end);

  LookupBenchReport report;
  Totals last;
  TimePoint last_at = start;
  for (int tick = 1;; ++tick) {
    const TimePoint next = start + std::chrono::seconds(tick);
    if (threads.WaitUntil(clock, next)) break;
    const TimePoint now = clock.Now();
    const Totals t = Sum(workers);
    const double dt = std::max(1e-9, ToSeconds(now - last_at));
    ProgressLine line;
    line.elapsed_s = ToSeconds(now - start);
    line.sent = t.sent;
    line.answered = t.answered;
    line.lost = t.lost;
    line.errors = t.errors;
    line.in_flight = t.in_flight;
    line.requests_per_s = static_cast<double>(t.answered - last.answered) / dt;
    line.lookups_per_s = static_cast<double>(t.lookups - last.lookups) / dt;
    const uint64_t n = t.latency_count - last.latency_count;
    line.mean_us = n == 0 ? 0 : static_cast<double>(t.latency_sum_ns - last.latency_sum_ns) /
                                    static_cast<double>(n) / 1e3;
    report.progress.push_back(line);
    if (progress) progress(line);
    last = t;
    last_at = now;
  }
  threads.Join();

  Histogram all;
  for (const auto& w : workers) all.Merge(w->histogram());
  const Totals t = Sum(workers);
  report.target = target.ToString();
  report.duration_s = options.duration_s;
  report.concurrency = options.concurrency;
  report.rate = options.rate;
  report.min_ids = options.min_ids;
  report.max_ids = options.max_ids;
  report.seed = options.seed;
  report.max_id = options.max_id;
  report.timeout_ms = ToMillis(options.timeout);
  report.sent = t.sent;
  report.answered = t.answered;
  report.lost = t.lost;
  report.errors = t.errors;
  report.send_failures = t.send_failures;
  report.stale = t.stale;
  report.lookups = t.lookups;
  report.found = t.found;
  for (const auto& w : workers) {
    if (!w->failure().ok()) {
      report.first_error = w->failure().ToString();
      break;
    }
  }
  report.requests_per_s = static_cast<double>(t.answered) / options.duration_s;
  report.lookups_per_s = static_cast<double>(t.lookups) / options.duration_s;
  report.loss_pct = t.sent == 0 ? 0 : 100.0 * static_cast<double>(t.lost) /
                                          static_cast<double>(t.sent);
  report.p50_us = static_cast<double>(all.Percentile(50)) / 1e3;
  report.p90_us = static_cast<double>(all.Percentile(90)) / 1e3;
  report.p99_us = static_cast<double>(all.Percentile(99)) / 1e3;
  report.p999_us = static_cast<double>(all.Percentile(99.9)) / 1e3;
  report.max_us = static_cast<double>(all.Max()) / 1e3;
  report.mean_us = all.Mean() / 1e3;

  return report;
}

}  // namespace vsc::bench

#include "bench/write_bench.h"

#include <poll.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "bench/histogram.h"
#include "bench/worker_threads.h"
#include "client/sql_client.h"
#include "common/random.h"
#include "net/endpoint.h"

namespace vsc::bench {
namespace {

constexpr char kInsertSql[] = "INSERT INTO resources(node, size, updated_at) VALUES(?1, ?2, ?3)";
constexpr char kUpdateSql[] = "UPDATE resources SET node = ?1, updated_at = ?2 WHERE id = ?3";
constexpr char kDeleteSql[] = "DELETE FROM resources WHERE id = ?1";

struct alignas(64) Counters {
  std::atomic<uint64_t> sent{0}, ok{0}, errors{0}, lost{0}, committed{0};
};

struct Pending {
  TimePoint intended;
  int statements;
};

class Worker {
 public:
  Worker(int index, const WriteBenchOptions& o, client::WriteClient c, const Clock& clock)
      : index_(index),
        o_(o),
        client_(std::move(c)),
        clock_(clock),
        rng_(o.seed * 0x9e3779b97f4a7c15ULL + static_cast<uint64_t>(index) + 1) {}

  Counters& counters() { return counters_; }
  const Histogram& histogram() const { return histogram_; }
  const std::string& first_error() const { return first_error_; }
  int64_t rows_changed() const { return rows_changed_; }
  uint64_t last_seq() const { return last_seq_; }

  void Run(TimePoint start, TimePoint end) {
    const bool open_loop = o_.rate > 0;
    Duration interval{0};
    TimePoint next_send = start;
    if (open_loop) {
      const double per_worker = o_.rate / o_.batch / o_.concurrency;  // requests/s
      interval = Duration(static_cast<int64_t>(1e9 / per_worker));
      next_send = start + interval * index_ / o_.concurrency;
    }
    std::vector<proto::WriteResponse> answers;
    bool broken = false;
    for (;;) {
      TimePoint now = clock_.Now();
      if (now < end && !broken) {
        if (open_loop) {
          while (next_send <= now && next_send < end && !broken) {
            broken = !SendOne(next_send);
            next_send += interval;
          }
        } else if (pending_.empty()) {
          broken = !SendOne(now);
        }
      } else if (pending_.empty() || broken) {
        break;
      }
      Expire(now);
      TimePoint wake = now + std::chrono::milliseconds(100);
      if (now < end) {
        wake = std::min(wake, end);
        if (open_loop) wake = std::min(wake, next_send);
      }
      if (!deadlines_.empty()) wake = std::min(wake, deadlines_.front().second);
      // The exact wait, not whole milliseconds: a wait rounded down to 0 ms would spin until the
      // next send (at 250 sends/s per worker, up to a quarter of a core each).
      const int64_t ns = std::max<int64_t>(0, (wake - now).count());
      const timespec ts{static_cast<time_t>(ns / 1'000'000'000),
                        static_cast<long>(ns % 1'000'000'000)};
      pollfd p{client_.fd(), POLLIN, 0};
      if (::ppoll(&p, 1, &ts, nullptr) > 0) {
        answers.clear();
        Status s = client_.ReceiveAvailable(answers);
        for (auto& a : answers) OnAnswer(a);
        if (!s.ok()) {
          NoteError(s.message());
          broken = true;
        }
      }
    }
    // Whatever is still pending when the connection broke is lost.
    counters_.lost.fetch_add(pending_.size(), std::memory_order_relaxed);
    pending_.clear();
  }

 private:
  proto::SqlStatement Make(WriteOp op) {
    const int64_t now = clock_.WallMicros() / 1'000'000;
    const std::string node = "node-" + std::to_string(rng_.Uniform(64));
    switch (op) {
      case WriteOp::kInsert:
        return client::MakeStatement(kInsertSql,
                                     {client::SqlText(node),
                                      client::SqlInt(static_cast<int64_t>(rng_.Uniform(1 << 20))),
                                      client::SqlInt(now)});
      case WriteOp::kUpdate:
        return client::MakeStatement(
            kUpdateSql, {client::SqlText(node), client::SqlInt(now),
                         client::SqlInt(static_cast<int64_t>(1 + rng_.Uniform(o_.max_id)))});
      case WriteOp::kDelete:
        return client::MakeStatement(
            kDeleteSql, {client::SqlInt(static_cast<int64_t>(1 + rng_.Uniform(o_.max_id)))});
      case WriteOp::kMixed:
        break;
    }
    return Make(static_cast<WriteOp>(rng_.Uniform(3)));
  }

  bool SendOne(TimePoint intended) {
    std::vector<proto::SqlStatement> batch;
    batch.reserve(static_cast<size_t>(o_.batch));
    for (int i = 0; i < o_.batch; ++i) batch.push_back(Make(o_.op));
    auto id = client_.Send(std::move(batch));
    if (!id.ok()) {
      NoteError(id.status().message());
      return false;
    }
    const TimePoint sent = clock_.Now();
    pending_.emplace(*id, Pending{intended, o_.batch});
    deadlines_.emplace_back(*id, sent + o_.timeout);
    counters_.sent.fetch_add(1, std::memory_order_relaxed);
    return true;
  }

  void Expire(TimePoint now) {
    while (!deadlines_.empty() && deadlines_.front().second <= now) {
      if (pending_.erase(deadlines_.front().first) > 0) {
        counters_.lost.fetch_add(1, std::memory_order_relaxed);
      }
      deadlines_.pop_front();
    }
    // Answered requests leave their deadline behind; drop those from the front.
    while (!deadlines_.empty() && !pending_.contains(deadlines_.front().first)) {
      deadlines_.pop_front();
    }
  }

  void OnAnswer(const proto::WriteResponse& a) {
    auto it = pending_.find(a.request_id());
    if (it == pending_.end()) return;  // answered after its timeout: already counted lost
    const Duration latency = clock_.Now() - it->second.intended;
    histogram_.Record(static_cast<uint64_t>(std::max<int64_t>(0, latency.count())));
    if (a.ok()) {
      counters_.ok.fetch_add(1, std::memory_order_relaxed);
      counters_.committed.fetch_add(static_cast<uint64_t>(it->second.statements),
                                    std::memory_order_relaxed);
      rows_changed_ += a.rows_changed();
      last_seq_ = std::max(last_seq_, a.seq());
    } else {
      counters_.errors.fetch_add(1, std::memory_order_relaxed);
      NoteError(a.error());
    }
    pending_.erase(it);
  }

  void NoteError(const std::string& e) {
    if (first_error_.empty()) first_error_ = e;
  }

  int index_;
  const WriteBenchOptions& o_;
  client::WriteClient client_;
  const Clock& clock_;
  Random rng_;
  Counters counters_;
  Histogram histogram_;
  std::unordered_map<uint64_t, Pending> pending_;
  std::deque<std::pair<uint64_t, TimePoint>> deadlines_;
  std::string first_error_;
  int64_t rows_changed_ = 0;
  uint64_t last_seq_ = 0;
};

double Us(uint64_t ns) { return static_cast<double>(ns) / 1000.0; }

}  // namespace

Result<WriteOp> ParseWriteOp(std::string_view t) {
  if (t == "insert") return WriteOp::kInsert;
  if (t == "update") return WriteOp::kUpdate;
  if (t == "delete") return WriteOp::kDelete;
  if (t == "mixed") return WriteOp::kMixed;
  return InvalidArgument("--op '" + std::string(t) + "': use insert, update, delete or mixed");
}

std::string_view WriteOpName(WriteOp op) {
  switch (op) {
    case WriteOp::kInsert:
      return "insert";
    case WriteOp::kUpdate:
      return "update";
    case WriteOp::kDelete:
      return "delete";
    case WriteOp::kMixed:
      break;
  }
  return "mixed";
}

Status CheckWriteBenchOptions(const WriteBenchOptions& o) {
  if (auto t = net::ParseTcpEndpoint(o.target); !t.ok()) {
    return InvalidArgument("--target '" + o.target + "': expected HOST:PORT of the write port");
  }
  if (o.concurrency < 1 || o.concurrency > 4096) return InvalidArgument("--concurrency must be 1-4096");
  if (o.batch < 1 || o.batch > 10000) return InvalidArgument("--batch must be 1-10000");
  if (o.duration_s <= 0) return InvalidArgument("--duration must be positive");
  if (o.rate < 0) return InvalidArgument("--rate must be 0 (closed loop) or positive");
  if (o.rate > 0 && o.rate / o.batch / o.concurrency > 1e6) {
    return InvalidArgument("--rate too high for the workers: raise --concurrency or --batch");
  }
  if (o.max_id == 0 && o.op != WriteOp::kInsert) {
    return InvalidArgument("--max-id must be at least 1 for updates and deletes");
  }
  if (o.timeout <= Duration::zero()) return InvalidArgument("--timeout-ms must be positive");
  return Status::Ok();
}

std::string WriteProgress::ToString() const {
  return fmt::format("{:6.1f} s  committed {} ({:.0f} writes/s)  error answers {}  lost {}",
                     elapsed_s, committed, writes_per_s, errors, lost);
}

std::string WriteBenchReport::ToJson() const {
  nlohmann::json j{{"target", target},
                   {"op", op},
                   {"duration_s", duration_s},
                   {"rate", rate},
                   {"batch", batch},
                   {"concurrency", concurrency},
                   {"requests_sent", requests_sent},
                   {"requests_ok", requests_ok},
                   {"error_answers", error_answers},
                   {"lost", lost},
                   {"committed_writes", committed_writes},
                   {"rows_changed", rows_changed},
                   {"last_seq", last_seq},
                   {"writes_per_s", writes_per_s},
                   {"requests_per_s", requests_per_s},
                   {"latency_us",
                    {{"p50", p50_us}, {"p90", p90_us}, {"p99", p99_us}, {"p999", p999_us},
                     {"max", max_us}, {"mean", mean_us}}},
                   {"first_error", first_error}};
  nlohmann::json prog = nlohmann::json::array();
  for (const auto& p : progress) {
    prog.push_back({{"elapsed_s", p.elapsed_s}, {"committed", p.committed},
                    {"writes_per_s", p.writes_per_s}, {"errors", p.errors}, {"lost", p.lost}});
  }
  j["progress"] = prog;
  return j.dump(2) + "\n";
}

std::string WriteBenchReport::SummaryTable() const {
  std::string out;
  auto row = [&out](std::string_view name, const std::string& value) {
    out += fmt::format("  {:<16} {}\n", name, value);
  };
  row("target", target);
  row("mode", fmt::format("{}, {}, {} workers, {} statement(s)/request", op,
                          rate > 0 ? fmt::format("open loop at {:.0f} writes/s", rate)
                                   : std::string("closed loop"),
                          concurrency, batch));
  row("duration", fmt::format("{:.1f} s", duration_s));
  row("requests", fmt::format("{} sent, {} ok, {} error answers, {} lost", requests_sent,
                              requests_ok, error_answers, lost));
  if (!first_error.empty()) row("first error", first_error);
  row("committed", fmt::format("{} writes ({} rows changed), last seq {}", committed_writes,
                               rows_changed, last_seq));
  row("writes/s", fmt::format("{:.1f} committed ({:.1f} requests/s)", writes_per_s, requests_per_s));
  row("latency (us)", fmt::format("p50 {:.1f}  p90 {:.1f}  p99 {:.1f}  p99.9 {:.1f}  max {:.1f}  "
                                  "mean {:.1f}",
                                  p50_us, p90_us, p99_us, p999_us, max_us, mean_us));
  return out;
}

Result<WriteBenchReport> RunWriteBench(const WriteBenchOptions& o, const proto::ClusterKey& key,
                                       const Clock& clock,
                                       const std::function<void(const WriteProgress&)>& progress) {
  VSC_RETURN_IF_ERROR(CheckWriteBenchOptions(o));
  const size_t colon = o.target.rfind(':');
  const std::string host = o.target.substr(0, colon);
  const uint16_t port = static_cast<uint16_t>(std::stoi(o.target.substr(colon + 1)));
  std::vector<std::unique_ptr<Worker>> workers;
  for (int i = 0; i < o.concurrency; ++i) {
    auto c = client::WriteClient::Connect(host, port, key, o.timeout, &clock);
    if (!c.ok()) return c.status();
    workers.push_back(std::make_unique<Worker>(i, o, std::move(c).value(), clock));
  }
  const TimePoint start = clock.Now();
  const TimePoint end = start + Duration(static_cast<int64_t>(o.duration_s * 1e9));
  WorkerThreads threads;
  threads.Start(workers, start, end);
  WriteBenchReport r;
  uint64_t last_committed = 0;
  TimePoint last = start;
  for (int tick = 1;; ++tick) {
    const TimePoint next = start + std::chrono::seconds(tick);
    if (threads.WaitUntil(clock, next)) break;
    WriteProgress p;
    const TimePoint now = clock.Now();
    p.elapsed_s = ToSeconds(now - start);
    for (auto& w : workers) {
      p.committed += w->counters().committed.load(std::memory_order_relaxed);
      p.errors += w->counters().errors.load(std::memory_order_relaxed);
      p.lost += w->counters().lost.load(std::memory_order_relaxed);
    }
    p.writes_per_s = static_cast<double>(p.committed - last_committed) /
                     std::max(1e-9, ToSeconds(now - last));
    last_committed = p.committed;
    last = now;
    r.progress.push_back(p);
    if (progress) progress(p);
  }
  threads.Join();

  Histogram h;
  for (auto& w : workers) {
    Counters& c = w->counters();
    r.requests_sent += c.sent.load();
    r.requests_ok += c.ok.load();
    r.error_answers += c.errors.load();
    r.lost += c.lost.load();
    r.committed_writes += c.committed.load();
    r.rows_changed += w->rows_changed();
    r.last_seq = std::max(r.last_seq, w->last_seq());
    if (r.first_error.empty()) r.first_error = w->first_error();
    h.Merge(w->histogram());
  }
  r.target = o.target;
  r.op = std::string(WriteOpName(o.op));
  r.duration_s = o.duration_s;
  r.rate = o.rate;
  r.batch = o.batch;
  r.concurrency = o.concurrency;
  r.writes_per_s = static_cast<double>(r.committed_writes) / o.duration_s;
  r.requests_per_s = static_cast<double>(r.requests_ok) / o.duration_s;
  r.p50_us = Us(h.Percentile(50));
  r.p90_us = Us(h.Percentile(90));
  r.p99_us = Us(h.Percentile(99));
  r.p999_us = Us(h.Percentile(99.9));
  r.max_us = Us(h.Max());
  r.mean_us = h.Mean() / 1000.0;
  return r;
}

}  // namespace vsc::bench

#include "bench/scenarios.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>
#include <sstream>
#include <thread>

#include "bench/local_cluster.h"
#include "bench/lookup_bench.h"
#include "common/subprocess.h"
#include "proto/lookup_codec.h"
#include "store/resource_builder.h"
#include "store/resource_store.h"

namespace vsc::bench {
namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;

double Seconds(Duration d) { return std::chrono::duration<double>(d).count(); }

std::string Pct(double v) { return fmt::format("{:.1f} %", v); }

// ---- the baseline: a bare batched UDP forwarder ----

// What the director's UDP data path does, without the framework: recvmmsg a batch, validate each
// request, prepend the forward header naming the client, pick the next real server round-robin,
// sendmmsg. One blocking thread; its CPU is read through its own thread CPU clock, so it can run
// in this process next to the load generator and still be measured alone.
class BareForwarder {
 public:
  static Result<std::unique_ptr<BareForwarder>> Start(std::vector<sockaddr_in> servers) {
    if (servers.empty()) return InvalidArgument("the bare forwarder needs a real server");
    std::unique_ptr<BareForwarder> f(new BareForwarder(std::move(servers)));
    f->fd_ = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (f->fd_ < 0) return ErrnoStatus("socket", errno);
    // Same buffers as the director's sockets (net::UdpBatchOptions).
    int size = 4 << 20;
    if (::setsockopt(f->fd_, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof size) != 0) {
      ::setsockopt(f->fd_, SOL_SOCKET, SO_RCVBUF, &size, sizeof size);
    }
    if (::setsockopt(f->fd_, SOL_SOCKET, SO_SNDBUFFORCE, &size, sizeof size) != 0) {
      ::setsockopt(f->fd_, SOL_SOCKET, SO_SNDBUF, &size, sizeof size);
    }
    // Wakes the blocking receive now and then so Stop() is noticed.
    timeval tv{0, 50'000};
    ::setsockopt(f->fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::bind(f->fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
      return ErrnoStatus("bind 127.0.0.1:0", errno);
    }
    socklen_t len = sizeof addr;
    ::getsockname(f->fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    f->port_ = ntohs(addr.sin_port);
    f->thread_ = std::thread([p = f.get()] { p->Run(); });
    return f;
  }

  ~BareForwarder() {
    stop_.store(true);
    if (thread_.joinable()) thread_.join();
    if (fd_ >= 0) ::close(fd_);
  }

  uint16_t port() const { return port_; }
  uint64_t forwarded() const { return forwarded_.load(std::memory_order_relaxed); }

  // CPU time the forwarding thread has used so far.
  Result<Duration> CpuTime() {
    clockid_t cid;
    if (int rc = pthread_getcpuclockid(thread_.native_handle(), &cid); rc != 0) {
      return ErrnoStatus("pthread_getcpuclockid", rc);
    }
    timespec ts{};
    if (::clock_gettime(cid, &ts) != 0) return ErrnoStatus("clock_gettime", errno);
    return std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec);
  }

 private:
  static constexpr int kBatch = 64;
  explicit BareForwarder(std::vector<sockaddr_in> servers) : servers_(std::move(servers)) {}

  void Run() {
    // Per-thread buffers: the loop itself allocates nothing.
    auto in_buf =
        std::make_unique<std::array<std::array<uint8_t, proto::kMaxLookupDatagram + 1>, kBatch>>();
    auto out_buf =
        std::make_unique<std::array<std::array<uint8_t, proto::kMaxLookupDatagram>, kBatch>>();
    std::array<mmsghdr, kBatch> in{}, out{};
    std::array<iovec, kBatch> in_iov{}, out_iov{};
    std::array<sockaddr_in, kBatch> peers{};
    for (int i = 0; i < kBatch; ++i) {
      in_iov[i] = {(*in_buf)[i].data(), (*in_buf)[i].size()};
      in[i].msg_hdr.msg_iov = &in_iov[i];
      in[i].msg_hdr.msg_iovlen = 1;
      in[i].msg_hdr.msg_name = &peers[i];
      out[i].msg_hdr.msg_iov = &out_iov[i];
      out[i].msg_hdr.msg_iovlen = 1;
      out[i].msg_hdr.msg_namelen = sizeof(sockaddr_in);
    }
    size_t next = 0;
    while (!stop_.load(std::memory_order_relaxed)) {
      for (auto& m : in) m.msg_hdr.msg_namelen = sizeof(sockaddr_in);
      const int n = ::recvmmsg(fd_, in.data(), kBatch, MSG_WAITFORONE, nullptr);
      if (n <= 0) continue;  // timeout (to look at stop_) or EINTR
      int m = 0;
      for (int i = 0; i < n; ++i) {
        const size_t len = in[i].msg_len;
        std::span<const uint8_t> data((*in_buf)[i].data(), len);
        if (!proto::DecodeRequest(data).ok()) continue;
        if (len + proto::kForwardHeaderSize > proto::kMaxLookupDatagram) continue;
        auto& buf = (*out_buf)[m];
        proto::ForwardHeader h{ntohl(peers[i].sin_addr.s_addr), ntohs(peers[i].sin_port), 0};
        proto::EncodeForwardHeader(h, std::span(buf).first<proto::kForwardHeaderSize>());
        std::memcpy(buf.data() + proto::kForwardHeaderSize, data.data(), len);
        out_iov[m] = {buf.data(), proto::kForwardHeaderSize + len};
        out[m].msg_hdr.msg_name = &servers_[next];
        next = next + 1 == servers_.size() ? 0 : next + 1;
        ++m;
      }
      int sent = 0;
      while (sent < m) {
        const int k = ::sendmmsg(fd_, out.data() + sent, static_cast<unsigned>(m - sent), 0);
        if (k <= 0) {
          ++sent;  // the kernel refused this datagram: drop it, as the director does
          continue;
        }
        sent += k;
        forwarded_.fetch_add(static_cast<uint64_t>(k), std::memory_order_relaxed);
      }
    }
  }

  std::vector<sockaddr_in> servers_;
  int fd_ = -1;
  uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> forwarded_{0};
  std::thread thread_;
};

// ---- helpers shared by the scenarios ----

std::string WorkDir(const ScenarioOptions& o) {
  return o.work_dir.empty() ? "/tmp/vsc-bench-" + std::to_string(::getpid()) : o.work_dir;
}

LocalClusterOptions ClusterOptions(const ScenarioOptions& o, const std::string& step, int servers,
                                   bool director) {
  LocalClusterOptions c;
  c.vsc_binary = o.vsc_binary;
  c.work_dir = WorkDir(o) + "/" + step;
  c.db_path = o.db_path;
  c.real_servers = servers;
  c.start_director = director;
  c.director_workers = o.director_workers;
  c.rs_workers = o.rs_workers;
  c.log_level = o.log_level;
  return c;
}

Result<std::unique_ptr<LocalCluster>> StartCluster(const LocalClusterOptions& c,
                                                   const ScenarioLog& log) {
  log(fmt::format("  starting {}{} real server(s){} (logs in {})",
                  c.start_director ? "director + " : "", c.real_servers,
                  c.rs_cpu_quota > 0 ? fmt::format(" at {:.2f} CPU each", c.rs_cpu_quota) : "",
                  c.work_dir));
  VSC_ASSIGN_OR_RETURN(auto cluster, LocalCluster::Start(c));
  if (c.start_director) VSC_RETURN_IF_ERROR(cluster->WaitAllActive(10s));
  return cluster;
}

LookupBenchOptions BenchOptions(const ScenarioOptions& o, uint16_t port, double rate) {
  LookupBenchOptions b;
  b.target = "udp://127.0.0.1:" + std::to_string(port);
  b.duration_s = o.duration_s;
  b.concurrency = o.concurrency;
  b.min_ids = o.min_ids;
  b.max_ids = o.max_ids;
  b.max_id = o.records;
  b.rate = rate;
  b.timeout = Duration(static_cast<int64_t>(o.timeout_ms * 1e6));
  return b;
}

Result<LookupBenchReport> Drive(const LookupBenchOptions& b, const Clock& clock,
                                const ScenarioLog& log) {
  log(fmt::format("  {} to {} for {:.1f} s",
                  b.rate > 0 ? fmt::format("{:.0f} req/s", b.rate)
                             : fmt::format("closed loop, {} workers", b.concurrency),
                  b.target, b.duration_s));
  VSC_ASSIGN_OR_RETURN(auto report, RunLookupBench(b, clock, [&](const ProgressLine& line) {
                         log("    " + line.ToString());
                       }));
  if (report.answered == 0) {
    return Unavailable("no request was answered by " + b.target +
                       (report.first_error.empty() ? "" : " (" + report.first_error + ")"));
  }
  return report;
}

// The value of one series of the director's /metrics.
Result<double> DirectorMetric(LocalCluster& cluster, const std::string& series) {
  VSC_ASSIGN_OR_RETURN(auto body, cluster.AdminGet("/metrics"));
  if (!body.is_string()) return Internal("/metrics did not answer text");
  std::istringstream in(body.get<std::string>());
  std::string line;
  while (std::getline(in, line)) {
    if (line.size() > series.size() && line.compare(0, series.size(), series) == 0 &&
        line[series.size()] == ' ') {
      return std::strtod(line.c_str() + series.size() + 1, nullptr);
    }
  }
  return NotFound("the director's /metrics has no " + series);
}

// CPU time used so far by the director, each real server and this process.
struct CpuSample {
  Duration director{0};
  std::vector<Duration> servers;
  Duration self{0};

  Duration ServersTotal() const {
    Duration t{0};
    for (auto d : servers) t += d;
    return t;
  }
  CpuSample operator-(const CpuSample& b) const {
    CpuSample r;
    r.director = director - b.director;
    r.self = self - b.self;
    for (size_t i = 0; i < servers.size(); ++i) r.servers.push_back(servers[i] - b.servers[i]);
    return r;
  }
};

Result<CpuSample> SampleCpu(LocalCluster& cluster) {
  CpuSample s;
  if (cluster.director_pid() > 0) {
    VSC_ASSIGN_OR_RETURN(s.director, ProcessCpuTime(cluster.director_pid()));
  }
  for (int i = 0; i < cluster.size(); ++i) {
    VSC_ASSIGN_OR_RETURN(auto d, ProcessCpuTime(cluster.server_pid(i)));
    s.servers.push_back(d);
  }
  VSC_ASSIGN_OR_RETURN(s.self, ProcessCpuTime(::getpid()));
  return s;
}

json ReportJson(const LookupBenchReport& r) { return json::parse(r.ToJson()); }

std::string Verdict(bool met) { return met ? "met" : "MISSED"; }

json CommonJson(const ScenarioOptions& o) {
  return {{"db", o.db_path},
          {"records", o.records},
          {"duration_s", o.duration_s},
          {"concurrency", o.concurrency},
          {"min_ids", o.min_ids},
          {"max_ids", o.max_ids},
          {"director_workers", o.director_workers},
          {"rs_workers", o.rs_workers},
          {"timeout_ms", o.timeout_ms},
          {"cpus_online", std::thread::hardware_concurrency()}};
}

Status Prepare(const ScenarioOptions& o, const ScenarioLog& log) {
  if (o.vsc_binary.empty()) return InvalidArgument("the path of vsc is needed to start a cluster");
  if (o.duration_s <= 0 || o.duration_s > 3600) {
    return InvalidArgument("duration must be above 0 and at most 3600 s");
  }
  return EnsureResourceDb(o.db_path, o.records, log);
}

}  // namespace

Status EnsureResourceDb(const std::string& path, uint64_t records, const ScenarioLog& log) {
  if (records == 0) return InvalidArgument("the database needs at least one record");
  std::error_code ec;
  if (std::filesystem::exists(path, ec)) {
    VSC_ASSIGN_OR_RETURN(auto reader, store::ResourceReader::Open(path));
    std::vector<store::LookupResult> out;
    const std::array<uint64_t, 2> probe{records, records + 1};
    VSC_RETURN_IF_ERROR(reader.Lookup(probe, out));
    if (!out[0].found || out[1].found) {
      return FailedPrecondition(path + " exists but does not hold exactly " +
                                std::to_string(records) +
                                " records; delete it or pass another --db path");
    }
    log(fmt::format("resource database {} ({} records, reused)", path, records));
    return Status::Ok();
  }
  log(fmt::format("building resource database {} ({} records)...", path, records));
  store::BuildOptions bo;
  bo.path = path;
  bo.records = records;
  uint64_t last_pct = 0;
  auto built = store::BuildResourceDb(bo, [&](uint64_t done, uint64_t total) {
    const uint64_t pct = total ? done * 100 / total : 100;
    if (pct >= last_pct + 20 || done == total) {
      last_pct = pct;
      log(fmt::format("  {} %", pct));
    }
  });
  if (!built.ok()) return built.status().Annotate("building " + path);
  return Status::Ok();
}

// ---- director-cpu ----

Result<ScenarioReport> RunDirectorCpu(const DirectorCpuOptions& options, const Clock& clock,
                                      const ScenarioLog& log) {
  const ScenarioOptions& o = options.common;
  VSC_RETURN_IF_ERROR(Prepare(o, log));
  if (options.rate <= 0) return InvalidArgument("director-cpu needs a fixed rate above 0");
  log("director-cpu: director + 2 real servers, fixed rate through the director, then through a "
      "bare forwarder");
  VSC_ASSIGN_OR_RETURN(auto cluster, StartCluster(ClusterOptions(o, "director-cpu", 2, true), log));

  struct Phase {
    LookupBenchReport report;
    uint64_t forwarded = 0;
    double forwarder_cpu_s = 0, servers_cpu_s = 0, loadgen_cpu_s = 0;
    double us_per_request() const { return forwarded ? forwarder_cpu_s * 1e6 / forwarded : 0; }
    double share_pct() const {
      const double total = forwarder_cpu_s + servers_cpu_s + loadgen_cpu_s;
      return total > 0 ? 100 * forwarder_cpu_s / total : 0;
    }
  };

  // Through the director.
  Phase vsc;
  {
    VSC_ASSIGN_OR_RETURN(double fwd0, DirectorMetric(*cluster, "vsc_datagrams_forwarded_total"));
    VSC_ASSIGN_OR_RETURN(auto cpu0, SampleCpu(*cluster));
    VSC_ASSIGN_OR_RETURN(vsc.report,
                         Drive(BenchOptions(o, cluster->lookup_port(), options.rate), clock, log));
    VSC_ASSIGN_OR_RETURN(auto cpu1, SampleCpu(*cluster));
    VSC_ASSIGN_OR_RETURN(double fwd1, DirectorMetric(*cluster, "vsc_datagrams_forwarded_total"));
    const CpuSample d = cpu1 - cpu0;
    vsc.forwarded = static_cast<uint64_t>(fwd1 - fwd0);
    vsc.forwarder_cpu_s = Seconds(d.director);
    vsc.servers_cpu_s = Seconds(d.ServersTotal());
    vsc.loadgen_cpu_s = Seconds(d.self);
  }

  // Through the bare forwarder, to the same real servers.
  Phase bare;
  {
    std::vector<sockaddr_in> servers;
    for (int i = 0; i < cluster->size(); ++i) {
      sockaddr_in a{};
      a.sin_family = AF_INET;
      a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      a.sin_port = htons(cluster->server_lookup_port(i));
      servers.push_back(a);
    }
    VSC_ASSIGN_OR_RETURN(auto fwd, BareForwarder::Start(std::move(servers)));
    VSC_ASSIGN_OR_RETURN(auto cpu0, SampleCpu(*cluster));
    VSC_ASSIGN_OR_RETURN(Duration t0, fwd->CpuTime());
    const uint64_t n0 = fwd->forwarded();
    VSC_ASSIGN_OR_RETURN(bare.report,
                         Drive(BenchOptions(o, fwd->port(), options.rate), clock, log));
    VSC_ASSIGN_OR_RETURN(auto cpu1, SampleCpu(*cluster));
    VSC_ASSIGN_OR_RETURN(Duration t1, fwd->CpuTime());
    const CpuSample d = cpu1 - cpu0;
    bare.forwarded = fwd->forwarded() - n0;
    bare.forwarder_cpu_s = Seconds(t1 - t0);
    bare.servers_cpu_s = Seconds(d.ServersTotal());
    // The forwarder thread lives in this process: the load generator is the rest of it.
    bare.loadgen_cpu_s = Seconds(d.self) - bare.forwarder_cpu_s;
  }
  cluster->Stop();

  const double ratio = bare.us_per_request() > 0 ? vsc.us_per_request() / bare.us_per_request() : 0;
  std::string t = fmt::format(
      "director-cpu: 2 real servers, {:.0f} req/s offered for {:.1f} s, {}-{} ids/request, "
      "{} load-generator workers\n",
      options.rate, o.duration_s, o.min_ids, o.max_ids, o.concurrency);
  auto row = [&](const std::string& name, const std::string& a, const std::string& b) {
    t += fmt::format("  {:<30} {:>16} {:>16}\n", name, a, b);
  };
  row("", "vsc director", "bare forwarder");
  row("forwarded requests", std::to_string(vsc.forwarded), std::to_string(bare.forwarded));
  row("answered/s", fmt::format("{:.0f}", vsc.report.requests_per_s),
      fmt::format("{:.0f}", bare.report.requests_per_s));
  row("loss", fmt::format("{:.3f} %", vsc.report.loss_pct),
      fmt::format("{:.3f} %", bare.report.loss_pct));
  row("p50 / p99 latency µs", fmt::format("{:.0f} / {:.0f}", vsc.report.p50_us, vsc.report.p99_us),
      fmt::format("{:.0f} / {:.0f}", bare.report.p50_us, bare.report.p99_us));
  row("forwarder CPU s", fmt::format("{:.3f}", vsc.forwarder_cpu_s),
      fmt::format("{:.3f}", bare.forwarder_cpu_s));
  row("real servers CPU s", fmt::format("{:.3f}", vsc.servers_cpu_s),
      fmt::format("{:.3f}", bare.servers_cpu_s));
  row("load generator CPU s", fmt::format("{:.3f}", vsc.loadgen_cpu_s),
      fmt::format("{:.3f}", bare.loadgen_cpu_s));
  row("forwarder CPU per request µs", fmt::format("{:.2f}", vsc.us_per_request()),
      fmt::format("{:.2f}", bare.us_per_request()));
  row("forwarder share of cluster CPU", Pct(vsc.share_pct()), Pct(bare.share_pct()));
  t += fmt::format("  ratio vsc/bare CPU per request: {:.2f}\n", ratio);
  t += fmt::format("  target <= 4 µs per request: {}; target share < 15 %: {}\n",
                   Verdict(vsc.us_per_request() <= 4), Verdict(vsc.share_pct() < 15));

  auto phase_json = [](const Phase& p) {
    return json{{"forwarded", p.forwarded},
                {"forwarder_cpu_s", p.forwarder_cpu_s},
                {"servers_cpu_s", p.servers_cpu_s},
                {"loadgen_cpu_s", p.loadgen_cpu_s},
                {"cpu_us_per_request", p.us_per_request()},
                {"share_pct", p.share_pct()},
                {"lookup", ReportJson(p.report)}};
  };
  ScenarioReport r;
  r.name = "director-cpu";
  r.table = std::move(t);
  r.json = {{"scenario", r.name},
            {"options", CommonJson(o)},
            {"rate", options.rate},
            {"vsc", phase_json(vsc)},
            {"bare", phase_json(bare)},
            {"ratio_vsc_to_bare", ratio},
            {"targets",
             {{"us_per_request_max", 4},
              {"share_pct_max", 15},
              {"us_per_request_met", vsc.us_per_request() <= 4},
              {"share_met", vsc.share_pct() < 15}}}};
  return r;
}

// ---- rs-lookup ----

Result<ScenarioReport> RunRsLookup(const RsLookupOptions& options, const Clock& clock,
                                   const ScenarioLog& log) {
  const ScenarioOptions& o = options.common;
  VSC_RETURN_IF_ERROR(Prepare(o, log));
  log("rs-lookup: one real server alone, closed loop");
  VSC_ASSIGN_OR_RETURN(auto cluster, StartCluster(ClusterOptions(o, "rs-lookup", 1, false), log));
  VSC_ASSIGN_OR_RETURN(auto cpu0, SampleCpu(*cluster));
  VSC_ASSIGN_OR_RETURN(auto report,
                       Drive(BenchOptions(o, cluster->server_lookup_port(0), 0), clock, log));
  VSC_ASSIGN_OR_RETURN(auto cpu1, SampleCpu(*cluster));
  cluster->Stop();
  const CpuSample d = cpu1 - cpu0;
  const double rs_cpu_s = Seconds(d.ServersTotal());
  const double per_cpu_s = rs_cpu_s > 0 ? report.answered / rs_cpu_s : 0;
  // The measured window includes the drain after sending (up to the timeout): use the answered
  // count over the RS's CPU, not answered/s over CPU/s of different windows.
  std::string t = fmt::format(
      "rs-lookup: 1 real server ({} worker), {} records, {}-{} ids/request, closed loop, "
      "{} workers, {:.1f} s\n",
      o.rs_workers, o.records, o.min_ids, o.max_ids, o.concurrency, o.duration_s);
  auto row = [&](const std::string& name, const std::string& v) {
    t += fmt::format("  {:<38} {:>14}\n", name, v);
  };
  row("requests/s", fmt::format("{:.0f}", report.requests_per_s));
  row("lookups (ids)/s", fmt::format("{:.0f}", report.lookups_per_s));
  row("loss", fmt::format("{:.3f} %", report.loss_pct));
  row("p50 / p99 latency µs", fmt::format("{:.0f} / {:.0f}", report.p50_us, report.p99_us));
  row("real server CPU s", fmt::format("{:.3f}", rs_cpu_s));
  row("real server CPU use (cores)", fmt::format("{:.2f}", rs_cpu_s / o.duration_s));
  row("load generator CPU s", fmt::format("{:.3f}", Seconds(d.self)));
  row("requests per RS CPU-second", fmt::format("{:.0f}", per_cpu_s));
  row("µs of RS CPU per request", fmt::format("{:.2f}", per_cpu_s > 0 ? 1e6 / per_cpu_s : 0));
  t += fmt::format("  target >= 100000 requests/s per core of the RS: {}\n",
                   Verdict(per_cpu_s >= 100'000));
  ScenarioReport r;
  r.name = "rs-lookup";
  r.table = std::move(t);
  r.json = {{"scenario", r.name},
            {"options", CommonJson(o)},
            {"rs_cpu_s", rs_cpu_s},
            {"loadgen_cpu_s", Seconds(d.self)},
            {"requests_per_rs_cpu_s", per_cpu_s},
            {"target_met", per_cpu_s >= 100'000},
            {"lookup", ReportJson(report)}};
  return r;
}

// ---- scaling ----

Result<ScenarioReport> RunScaling(const ScalingOptions& options, const Clock& clock,
                                  const ScenarioLog& log) {
  const ScenarioOptions& o = options.common;
  VSC_RETURN_IF_ERROR(Prepare(o, log));
  if (options.max_rs < 1 || options.max_rs > 64) return InvalidArgument("max-rs must be 1 to 64");
  if (options.quota <= 0 || options.quota > 64) {
    return InvalidArgument("quota must be above 0 CPUs (0.25 = a quarter of a core)");
  }
  log(fmt::format("scaling: real servers at {:.2f} CPU each, 1 alone, then director + 1..{}",
                  options.quota, options.max_rs));
  struct Step {
    std::string name;
    int servers = 0;
    bool director = false;
    LookupBenchReport report;
    double servers_cpu_s = 0, director_cpu_s = 0, loadgen_cpu_s = 0;
  };
  std::vector<Step> steps;
  for (int k = 0; k <= options.max_rs; ++k) {
    Step s;
    s.director = k > 0;
    s.servers = k > 0 ? k : 1;
    s.name = s.director ? fmt::format("director + {} RS", k) : "1 RS alone";
    auto c = ClusterOptions(o, s.director ? fmt::format("scaling-{}", k) : "scaling-alone",
                            s.servers, s.director);
    c.rs_cpu_quota = options.quota;
    VSC_ASSIGN_OR_RETURN(auto cluster, StartCluster(c, log));
    const uint16_t port = s.director ? cluster->lookup_port() : cluster->server_lookup_port(0);
    VSC_ASSIGN_OR_RETURN(auto cpu0, SampleCpu(*cluster));
    VSC_ASSIGN_OR_RETURN(s.report, Drive(BenchOptions(o, port, 0), clock, log));
    VSC_ASSIGN_OR_RETURN(auto cpu1, SampleCpu(*cluster));
    cluster->Stop();
    const CpuSample d = cpu1 - cpu0;
    s.servers_cpu_s = Seconds(d.ServersTotal());
    s.director_cpu_s = Seconds(d.director);
    s.loadgen_cpu_s = Seconds(d.self);
    steps.push_back(std::move(s));
  }
  const double base = steps.size() > 1 ? steps[1].report.requests_per_s : 0;
  std::string t = fmt::format(
      "scaling: each real server limited to {:.2f} CPU (cgroup cpu quota), closed loop, {} "
      "workers, {}-{} ids/request, {:.1f} s per step\n",
      options.quota, o.concurrency, o.min_ids, o.max_ids, o.duration_s);
  t += fmt::format("  {:<18} {:>12} {:>8} {:>8} {:>12} {:>12} {:>12} {:>10}\n", "step",
                   "answered/s", "ratio", "loss %", "p99 µs", "RS cores", "dir cores", "gen cores");
  json steps_json = json::array();
  for (const auto& s : steps) {
    const double ratio = base > 0 ? s.report.requests_per_s / base : 0;
    const double window = s.report.duration_s + s.report.timeout_ms / 1000;
    t += fmt::format(
        "  {:<18} {:>12.0f} {:>8.2f} {:>8.3f} {:>12.0f} {:>12.2f} {:>12.2f} {:>10.2f}\n", s.name,
        s.report.requests_per_s, ratio, s.report.loss_pct, s.report.p99_us,
        s.servers_cpu_s / window, s.director_cpu_s / window, s.loadgen_cpu_s / window);
    steps_json.push_back({{"step", s.name},
                          {"servers", s.servers},
                          {"director", s.director},
                          {"ratio_to_director_1rs", ratio},
                          {"servers_cpu_s", s.servers_cpu_s},
                          {"director_cpu_s", s.director_cpu_s},
                          {"loadgen_cpu_s", s.loadgen_cpu_s},
                          {"lookup", ReportJson(s.report)}});
  }
  const double top = base > 0 ? steps.back().report.requests_per_s / base : 0;
  const double wanted = 0.95 * options.max_rs;
  t += fmt::format("  {} RS / 1 RS through the director: {:.2f} (target >= {:.2f}: {})\n",
                   options.max_rs, top, wanted, Verdict(top >= wanted));
  t += "  (cores = CPU seconds over the step's window: sending period + timeout)\n";
  ScenarioReport r;
  r.name = "scaling";
  r.table = std::move(t);
  r.json = {{"scenario", r.name},       {"options", CommonJson(o)},   {"quota", options.quota},
            {"max_rs", options.max_rs}, {"steps", steps_json},        {"top_ratio", top},
            {"target_ratio", wanted},   {"target_met", top >= wanted}};
  return r;
}

// ---- loss ----

Result<ScenarioReport> RunLoss(const LossOptions& options, const Clock& clock,
                               const ScenarioLog& log) {
  const ScenarioOptions& o = options.common;
  VSC_RETURN_IF_ERROR(Prepare(o, log));
  for (double p : options.load_pcts) {
    if (p <= 0) return InvalidArgument("load percentages must be above 0");
  }
  log("loss: director + 2 real servers, closed-loop maximum, then fixed offered loads");
  VSC_ASSIGN_OR_RETURN(auto cluster, StartCluster(ClusterOptions(o, "loss", 2, true), log));
  VSC_ASSIGN_OR_RETURN(auto max_report,
                       Drive(BenchOptions(o, cluster->lookup_port(), 0), clock, log));
  const double max_rate = max_report.requests_per_s;
  std::vector<std::pair<double, LookupBenchReport>> steps;
  for (double p : options.load_pcts) {
    VSC_ASSIGN_OR_RETURN(
        auto rep, Drive(BenchOptions(o, cluster->lookup_port(), max_rate * p / 100), clock, log));
    steps.emplace_back(p, std::move(rep));
  }
  cluster->Stop();
  std::string t = fmt::format(
      "loss: director + 2 real servers, {}-{} ids/request, {} workers, {:.1f} s per step, "
      "timeout {:.0f} ms\n  closed-loop maximum: {:.0f} requests/s (loss {:.3f} %, p99 {:.0f} "
      "µs)\n",
      o.min_ids, o.max_ids, o.concurrency, o.duration_s, o.timeout_ms, max_rate,
      max_report.loss_pct, max_report.p99_us);
  t += fmt::format("  {:>8} {:>12} {:>12} {:>10} {:>10} {:>10} {:>10}\n", "offered", "req/s",
                   "answered/s", "loss %", "p50 µs", "p99 µs", "p99.9 µs");
  json steps_json = json::array();
  for (const auto& [p, rep] : steps) {
    t += fmt::format("  {:>7.0f}% {:>12.0f} {:>12.0f} {:>10.3f} {:>10.0f} {:>10.0f} {:>10.0f}\n", p,
                     rep.rate, rep.requests_per_s, rep.loss_pct, rep.p50_us, rep.p99_us,
                     rep.p999_us);
    steps_json.push_back({{"offered_pct", p}, {"lookup", ReportJson(rep)}});
  }
  ScenarioReport r;
  r.name = "loss";
  r.table = std::move(t);
  r.json = {{"scenario", r.name},
            {"options", CommonJson(o)},
            {"max_requests_per_s", max_rate},
            {"max", ReportJson(max_report)},
            {"steps", steps_json}};
  return r;
}

}  // namespace vsc::bench

#include "bench/scenarios.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <functional>
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
// sendmmsg. It runs in a forked child process of one thread, so it competes for the CPU on the
// same footing as the director process (a thread of the bench process would share that
// process's threads' fair share with the load generator and starve first on a busy machine), and
// its CPU is read from /proc like the director's. The forwarded count lives in a shared mapping.
// Start forks: call it while this process has no other thread. The child dies with the parent
// (PR_SET_PDEATHSIG) and is killed and reaped by the destructor.
class BareForwarder {
 public:
  static Result<std::unique_ptr<BareForwarder>> Start(std::vector<sockaddr_in> servers) {
    if (servers.empty()) return InvalidArgument("the bare forwarder needs a real server");
    std::unique_ptr<BareForwarder> f(new BareForwarder(std::move(servers)));
    void* shared = ::mmap(nullptr, sizeof(std::atomic<uint64_t>), PROT_READ | PROT_WRITE,
                          MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (shared == MAP_FAILED) return ErrnoStatus("mmap", errno);
    f->forwarded_ = new (shared) std::atomic<uint64_t>(0);
    static_assert(std::atomic<uint64_t>::is_always_lock_free, "shared between processes");
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
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::bind(f->fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
      return ErrnoStatus("bind 127.0.0.1:0", errno);
    }
    socklen_t len = sizeof addr;
    ::getsockname(f->fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    f->port_ = ntohs(addr.sin_port);
    const pid_t parent = ::getpid();
    const pid_t pid = ::fork();
    if (pid < 0) return ErrnoStatus("fork", errno);
    if (pid == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() != parent) ::_exit(0);  // the parent died before prctl
      f->Run();                               // never returns
    }
    f->pid_ = pid;
    ::close(f->fd_);  // the child's copy serves
    f->fd_ = -1;
    return f;
  }

  ~BareForwarder() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    if (fd_ >= 0) ::close(fd_);
    if (forwarded_ != nullptr) ::munmap(forwarded_, sizeof(std::atomic<uint64_t>));
  }

  uint16_t port() const { return port_; }
  pid_t pid() const { return pid_; }
  uint64_t forwarded() const { return forwarded_->load(std::memory_order_relaxed); }

 private:
  static constexpr int kBatch = 64;
  explicit BareForwarder(std::vector<sockaddr_in> servers) : servers_(std::move(servers)) {}

  [[noreturn]] void Run() {
    // Allocated once: the loop itself allocates nothing.
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
    for (;;) {
      for (auto& m : in) m.msg_hdr.msg_namelen = sizeof(sockaddr_in);
      const int n = ::recvmmsg(fd_, in.data(), kBatch, MSG_WAITFORONE, nullptr);
      if (n <= 0) continue;  // EINTR
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
        forwarded_->fetch_add(static_cast<uint64_t>(k), std::memory_order_relaxed);
      }
    }
  }

  std::vector<sockaddr_in> servers_;
  int fd_ = -1;
  uint16_t port_ = 0;
  pid_t pid_ = -1;
  std::atomic<uint64_t>* forwarded_ = nullptr;  // in a MAP_SHARED page, written by the child
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
  if (options.rounds < 1 || options.rounds > 100) return InvalidArgument("rounds must be 1 to 100");
  log(
      fmt::format("director-cpu: director + 2 real servers; {} round(s) of the same fixed rate "
                  "through the director, then through a bare forwarder",
                  options.rounds));
  VSC_ASSIGN_OR_RETURN(auto cluster, StartCluster(ClusterOptions(o, "director-cpu", 2, true), log));
  std::vector<sockaddr_in> servers;
  for (int i = 0; i < cluster->size(); ++i) {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(cluster->server_lookup_port(i));
    servers.push_back(a);
  }
  // Forked now, while this process has no other thread; idle (blocked) until its phases.
  VSC_ASSIGN_OR_RETURN(auto bare_fwd, BareForwarder::Start(std::move(servers)));

  struct Phase {
    uint64_t forwarded = 0, sent = 0, answered = 0, lost = 0;
    double forwarder_cpu_s = 0, servers_cpu_s = 0, loadgen_cpu_s = 0;
    double requests_per_s = 0, p50_us = 0, p99_us = 0;  // of the round (worst p99 when summed)
    double us_per_request() const { return forwarded ? forwarder_cpu_s * 1e6 / forwarded : 0; }
    double share_pct() const {
      const double total = forwarder_cpu_s + servers_cpu_s + loadgen_cpu_s;
      return total > 0 ? 100 * forwarder_cpu_s / total : 0;
    }
    double loss_pct() const { return sent ? 100.0 * lost / sent : 0; }
    void Add(const Phase& p) {
      forwarded += p.forwarded;
      sent += p.sent;
      answered += p.answered;
      lost += p.lost;
      forwarder_cpu_s += p.forwarder_cpu_s;
      servers_cpu_s += p.servers_cpu_s;
      loadgen_cpu_s += p.loadgen_cpu_s;
      p99_us = std::max(p99_us, p.p99_us);
    }
    json Json() const {
      return {{"forwarded", forwarded},
              {"sent", sent},
              {"answered", answered},
              {"lost", lost},
              {"forwarder_cpu_s", forwarder_cpu_s},
              {"servers_cpu_s", servers_cpu_s},
              {"loadgen_cpu_s", loadgen_cpu_s},
              {"cpu_us_per_request", us_per_request()},
              {"share_pct", share_pct()},
              {"requests_per_s", requests_per_s},
              {"p50_us", p50_us},
              {"p99_us", p99_us}};
    }
  };

  // One phase: the same fixed-rate load to `port`; `forwarder` is the pid whose CPU counts as the
  // forwarder's and `forwarded` reads its forwarded count.
  auto run_phase = [&](uint16_t port, pid_t forwarder,
                       const std::function<Result<uint64_t>()>& forwarded) -> Result<Phase> {
    Phase ph;
    VSC_ASSIGN_OR_RETURN(uint64_t n0, forwarded());
    VSC_ASSIGN_OR_RETURN(auto cpu0, SampleCpu(*cluster));
    VSC_ASSIGN_OR_RETURN(Duration f0, ProcessCpuTime(forwarder));
    VSC_ASSIGN_OR_RETURN(auto rep, Drive(BenchOptions(o, port, options.rate), clock, log));
    VSC_ASSIGN_OR_RETURN(auto cpu1, SampleCpu(*cluster));
    VSC_ASSIGN_OR_RETURN(Duration f1, ProcessCpuTime(forwarder));
    VSC_ASSIGN_OR_RETURN(uint64_t n1, forwarded());
    const CpuSample d = cpu1 - cpu0;
    ph.forwarded = n1 - n0;
    ph.sent = rep.sent;
    ph.answered = rep.answered;
    ph.lost = rep.lost;
    ph.forwarder_cpu_s = Seconds(f1 - f0);
    ph.servers_cpu_s = Seconds(d.ServersTotal());
    ph.loadgen_cpu_s = Seconds(d.self);
    ph.requests_per_s = rep.requests_per_s;
    ph.p50_us = rep.p50_us;
    ph.p99_us = rep.p99_us;
    return ph;
  };
  auto director_forwarded = [&]() -> Result<uint64_t> {
    VSC_ASSIGN_OR_RETURN(double v, DirectorMetric(*cluster, "vsc_datagrams_forwarded_total"));
    return static_cast<uint64_t>(v);
  };
  auto bare_forwarded = [&]() -> Result<uint64_t> { return bare_fwd->forwarded(); };

  // Interleaved rounds: drift in the machine's load (it is shared) hits both sides alike.
  std::vector<Phase> vsc_rounds, bare_rounds;
  for (int r = 0; r < options.rounds; ++r) {
    log(fmt::format("  round {}/{}: through the director", r + 1, options.rounds));
    VSC_ASSIGN_OR_RETURN(
        auto v, run_phase(cluster->lookup_port(), cluster->director_pid(), director_forwarded));
    log(fmt::format("  round {}/{}: through the bare forwarder", r + 1, options.rounds));
    VSC_ASSIGN_OR_RETURN(auto b, run_phase(bare_fwd->port(), bare_fwd->pid(), bare_forwarded));
    vsc_rounds.push_back(v);
    bare_rounds.push_back(b);
  }
  bare_fwd.reset();
  cluster->Stop();

  Phase vsc, bare;
  for (const auto& p : vsc_rounds) vsc.Add(p);
  for (const auto& p : bare_rounds) bare.Add(p);
  const double window = options.rounds * o.duration_s;
  vsc.requests_per_s = vsc.answered / window;
  bare.requests_per_s = bare.answered / window;
  auto round_list = [](const std::vector<Phase>& ps) {
    std::string out;
    for (const auto& p : ps)
      out += fmt::format("{}{:.1f}", out.empty() ? "" : " ", p.us_per_request());
    return out;
  };
  const double ratio = bare.us_per_request() > 0 ? vsc.us_per_request() / bare.us_per_request() : 0;
  std::string t = fmt::format(
      "director-cpu: 2 real servers, {:.0f} req/s offered, {} round(s) of {:.1f} s per side, "
      "{}-{} ids/request, {} load-generator workers\n",
      options.rate, options.rounds, o.duration_s, o.min_ids, o.max_ids, o.concurrency);
  auto row = [&](const std::string& name, const std::string& a, const std::string& b) {
    t += fmt::format("  {:<32} {:>18} {:>18}\n", name, a, b);
  };
  row("(sums over the rounds)", "vsc director", "bare forwarder");
  row("forwarded requests", std::to_string(vsc.forwarded), std::to_string(bare.forwarded));
  row("answered/s", fmt::format("{:.0f}", vsc.requests_per_s),
      fmt::format("{:.0f}", bare.requests_per_s));
  row("loss", fmt::format("{:.3f} %", vsc.loss_pct()), fmt::format("{:.3f} %", bare.loss_pct()));
  row("worst round p99 latency µs", fmt::format("{:.0f}", vsc.p99_us),
      fmt::format("{:.0f}", bare.p99_us));
  row("forwarder CPU s", fmt::format("{:.3f}", vsc.forwarder_cpu_s),
      fmt::format("{:.3f}", bare.forwarder_cpu_s));
  row("real servers CPU s", fmt::format("{:.3f}", vsc.servers_cpu_s),
      fmt::format("{:.3f}", bare.servers_cpu_s));
  row("load generator CPU s", fmt::format("{:.3f}", vsc.loadgen_cpu_s),
      fmt::format("{:.3f}", bare.loadgen_cpu_s));
  row("forwarder CPU per request µs", fmt::format("{:.2f}", vsc.us_per_request()),
      fmt::format("{:.2f}", bare.us_per_request()));
  row("  per round", round_list(vsc_rounds), round_list(bare_rounds));
  row("forwarder share of cluster CPU", Pct(vsc.share_pct()), Pct(bare.share_pct()));
  t += fmt::format("  ratio vsc/bare CPU per request: {:.2f}\n", ratio);
  t += fmt::format("  target <= 4 µs per request: {}; target share < 15 %: {}\n",
                   Verdict(vsc.us_per_request() <= 4), Verdict(vsc.share_pct() < 15));

  auto rounds_json = [](const std::vector<Phase>& ps) {
    json a = json::array();
    for (const auto& p : ps) a.push_back(p.Json());
    return a;
  };
  ScenarioReport r;
  r.name = "director-cpu";
  r.table = std::move(t);
  r.json = {{"scenario", r.name},
            {"options", CommonJson(o)},
            {"rate", options.rate},
            {"rounds", options.rounds},
            {"vsc", vsc.Json()},
            {"bare", bare.Json()},
            {"vsc_rounds", rounds_json(vsc_rounds)},
            {"bare_rounds", rounds_json(bare_rounds)},
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

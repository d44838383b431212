#include "integration/cluster_harness.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>

#include "common/random.h"
#include "net/endpoint.h"
#include "store/resource_builder.h"
#include "store/resource_store.h"

namespace vsc::integration {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

int PollMillis(Duration d) {
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
  if (ms < 0) return 0;
  return static_cast<int>(std::min<int64_t>(ms, 60'000));
}

struct SharedData {
  std::string dir;
  std::string db_path;
  std::unique_ptr<Oracle> oracle;
};

SharedData& Shared() {
  static SharedData* data = [] {
    auto* d = new SharedData;
    d->dir = MakeTempDir("vsc-integration-db");
    d->db_path = d->dir + "/res.db";
    store::BuildOptions options;
    options.path = d->db_path;
    options.records = kRecords;
    options.nodes = kNodes;
    auto built = store::BuildResourceDb(options, {});
    if (!built.ok()) {
      std::fprintf(stderr, "cannot build the test database: %s\n",
                   built.status().ToString().c_str());
      std::abort();
    }
    auto reader = store::ResourceReader::Open(d->db_path);
    if (!reader.ok()) {
      std::fprintf(stderr, "cannot open the test database: %s\n",
                   reader.status().ToString().c_str());
      std::abort();
    }
    std::vector<std::string> nodes(kRecords + 1);
    std::vector<store::LookupResult> out;
    for (uint64_t first = 1; first <= kRecords; first += store::kMaxLookupIds) {
      std::vector<uint64_t> ids;
      for (uint64_t id = first; id < first + store::kMaxLookupIds && id <= kRecords; ++id) {
        ids.push_back(id);
      }
      Status s = reader->Lookup(ids, out);
      if (!s.ok()) {
        std::fprintf(stderr, "cannot read the test database: %s\n", s.ToString().c_str());
        std::abort();
      }
      for (const auto& r : out) {
        if (!r.found) {
          std::fprintf(stderr, "test database lacks id %lu\n", static_cast<unsigned long>(r.id));
          std::abort();
        }
        nodes[r.id] = r.node;
      }
    }
    d->oracle = std::make_unique<Oracle>(std::move(nodes));
    // The database outlives every test of the binary; remove it when the process exits.
    std::atexit([] {
      std::error_code ec;
      fs::remove_all(Shared().dir, ec);
    });
    return d;
  }();
  return *data;
}

}  // namespace

proto::LookupAnswer Oracle::Expect(uint64_t id) const {
  if (id >= 1 && id < nodes_.size()) return {id, true, nodes_[id]};
  return {id, false, ""};
}

bool Oracle::Matches(std::span<const uint64_t> ids,
                     const std::vector<proto::LookupAnswer>& answers) const {
  if (answers.size() != ids.size()) return false;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (answers[i] != Expect(ids[i])) return false;
  }
  return true;
}

const std::string& SharedDbPath() { return Shared().db_path; }
const Oracle& SharedOracle() { return *Shared().oracle; }

std::string MakeTempDir(const std::string& prefix) {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/" + prefix + "-XXXXXX";
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  if (::mkdtemp(buf.data()) == nullptr) {
    std::fprintf(stderr, "mkdtemp %s: %s\n", pattern.c_str(), std::strerror(errno));
    std::abort();
  }
  return buf.data();
}

Result<double> MetricValue(const std::string& metrics_text, const std::string& series) {
  std::istringstream in(metrics_text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.size() > series.size() && line.compare(0, series.size(), series) == 0 &&
        line[series.size()] == ' ') {
      try {
        return std::stod(line.substr(series.size() + 1));
      } catch (const std::exception&) {
        return InvalidArgument("metric " + series + " has no number: " + line);
      }
    }
  }
  return NotFound("no series " + series + " in /metrics");
}

const nlohmann::json* FindServer(const nlohmann::json& status, int service, const std::string& id) {
  for (const auto& s : status.at("services").at(service).at("servers")) {
    if (s.at("id") == id) return &s;
  }
  return nullptr;
}

uint64_t ServerConns(const nlohmann::json& status, int service, const std::string& id) {
  const nlohmann::json* s = FindServer(status, service, id);
  return s ? s->at("stats").at("conns").get<uint64_t>() : 0;
}

Result<std::pair<int, std::string>> AdminHttpGet(uint16_t port, const std::string& target,
                                                 const std::string& token, Duration timeout) {
  RealClock clock;
  const TimePoint deadline = clock.Now() + timeout;
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return ErrnoStatus("socket", errno);
  const linger reset{1, 0};
  ::setsockopt(fd.get(), SOL_SOCKET, SO_LINGER, &reset, sizeof(reset));
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  to.sin_port = htons(port);
  if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&to), sizeof(to)) != 0) {
    return ErrnoStatus("connect admin port", errno);
  }
  const std::string request = "GET " + target +
                              " HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + token +
                              "\r\nConnection: close\r\n\r\n";
  if (::send(fd.get(), request.data(), request.size(), MSG_NOSIGNAL) !=
      static_cast<ssize_t>(request.size())) {
    return ErrnoStatus("send to admin port", errno);
  }
  // The server closes after its answer (Connection: close): read to EOF.
  std::string response;
  char buf[16384];
  for (;;) {
    pollfd p{fd.get(), POLLIN, 0};
    int r = ::poll(&p, 1, PollMillis(deadline - clock.Now()));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return Unavailable("GET " + target + ": no complete answer in time");
    ssize_t n = ::recv(fd.get(), buf, sizeof(buf), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoStatus("recv from admin port", errno);
    if (n == 0) break;
    response.append(buf, static_cast<size_t>(n));
  }
  const size_t head_end = response.find("\r\n\r\n");
  int status = 0;
  if (head_end == std::string::npos || std::sscanf(response.c_str(), "HTTP/1.1 %d", &status) != 1) {
    return DataLoss("GET " + target + ": not an HTTP response");
  }
  return std::make_pair(status, response.substr(head_end + 4));
}

std::vector<uint8_t> EncodeLookup(uint64_t request_id, std::span<const uint64_t> ids) {
  std::vector<uint8_t> out(proto::RequestSize(ids.size()));
  size_t n = proto::EncodeRequest(proto::LookupRequest::Of(request_id, ids), out);
  out.resize(n);
  return out;
}

// ---- UdpProbe ----

namespace {
net::SockAddr Loopback(bool ipv6, uint16_t port) {
  const asio::ip::address a = ipv6 ? asio::ip::address(asio::ip::address_v6::loopback())
                                   : asio::ip::address(asio::ip::address_v4::loopback());
  return net::ToSockAddr({a, port});
}
}  // namespace

Result<UdpProbe> UdpProbe::Open(bool ipv6) {
  UniqueFd fd(::socket(ipv6 ? AF_INET6 : AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return ErrnoStatus("socket", errno);
  net::SockAddr addr = Loopback(ipv6, 0);
  if (::bind(fd.get(), addr.get(), addr.length()) != 0) {
    return ErrnoStatus("bind", errno);
  }
  socklen_t len = sizeof(addr);
  if (::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    return ErrnoStatus("getsockname", errno);
  }
  return UdpProbe(std::move(fd), addr.port(), ipv6);
}

Status UdpProbe::SendTo(uint16_t port, std::span<const uint8_t> bytes) {
  const net::SockAddr to = Loopback(ipv6_, port);
  ssize_t n = ::sendto(fd_.get(), bytes.data(), bytes.size(), 0, to.get(), to.length());
  if (n < 0) return ErrnoStatus("sendto", errno);
  if (static_cast<size_t>(n) != bytes.size()) return IoError("sendto: short write");
  return Status::Ok();
}

std::optional<UdpProbe::Datagram> UdpProbe::Receive(Duration timeout) {
  RealClock clock;
  const TimePoint deadline = clock.Now() + timeout;
  for (;;) {
    pollfd p{fd_.get(), POLLIN, 0};
    int r = ::poll(&p, 1, PollMillis(deadline - clock.Now()));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return std::nullopt;
    std::vector<uint8_t> buf(65536);
    net::SockAddr from{};
    socklen_t len = sizeof(from);
    ssize_t n = ::recvfrom(fd_.get(), buf.data(), buf.size(), MSG_DONTWAIT,
                           reinterpret_cast<sockaddr*>(&from), &len);
    if (n < 0) {
      if (errno == EAGAIN || errno == EINTR) continue;
      return std::nullopt;
    }
    buf.resize(static_cast<size_t>(n));
    return Datagram{std::move(buf), from.port()};
  }
}

std::optional<UdpProbe::Datagram> UdpProbe::ReceiveAnswerTo(uint64_t request_id, Duration timeout) {
  RealClock clock;
  const TimePoint deadline = clock.Now() + timeout;
  while (auto d = Receive(std::max(deadline - clock.Now(), Duration::zero()))) {
    auto r = proto::DecodeResponse(d->bytes);
    if (r.ok() && r->request_id == request_id) return d;
  }
  return std::nullopt;
}

// ---- PacedUdpLoad ----

PacedUdpLoad::~PacedUdpLoad() {
  if (thread_.joinable()) Stop(Duration::zero());
}

Status PacedUdpLoad::Start() {
  VSC_ASSIGN_OR_RETURN(auto probe, UdpProbe::Open());
  probe_.emplace(std::move(probe));
  records_.reserve(1 << 16);
  asked_.reserve(1 << 16);
  thread_ = std::thread([this] { Run(); });
  return Status::Ok();
}

void PacedUdpLoad::Stop(Duration drain) {
  drain_ns_ = drain.count();
  stop_sending_ = true;
  if (thread_.joinable()) thread_.join();
}

void PacedUdpLoad::ReceiveReady(UdpProbe& probe) {
  const Oracle& oracle = SharedOracle();
  for (;;) {
    auto d = probe.Receive(Duration::zero());
    if (!d) return;
    auto response = proto::DecodeResponse(d->bytes);
    if (!response.ok()) continue;
    const uint64_t id = response->request_id;
    if (id == 0 || id > records_.size()) continue;
    Record& r = records_[id - 1];
    if (r.answered) continue;
    r.answered = clock_.Now();
    r.from_port = d->from_port;
    r.correct = response->status == proto::LookupStatus::kOk &&
                oracle.Matches(asked_[id - 1], response->answers);
  }
}

void PacedUdpLoad::Run() {
  Random random(seed_);
  UdpProbe& probe = *probe_;
  TimePoint next = clock_.Now();
  while (!stop_sending_) {
    const TimePoint now = clock_.Now();
    if (now >= next) {
      std::vector<uint64_t> ids = {1 + random.Uniform(kRecords + 5000),
                                   1 + random.Uniform(kRecords + 5000)};
      const uint64_t request_id = records_.size() + 1;
      auto bytes = EncodeLookup(request_id, ids);
      records_.push_back(Record{request_id, clock_.Now(), std::nullopt, 0, false});
      asked_.push_back(std::move(ids));
      (void)probe.SendTo(port_, bytes);  // a send error shows as an unanswered request
      sent_.fetch_add(1);
      next += interval_;
      if (next < now) next = now;  // fell behind (descheduled): do not burst to catch up
      continue;
    }
    pollfd p{probe.fd(), POLLIN, 0};
    ::poll(&p, 1, PollMillis(next - now));
    ReceiveReady(probe);
  }
  const TimePoint deadline = clock_.Now() + Duration(drain_ns_.load());
  auto all_answered = [this] {
    for (const auto& r : records_) {
      if (!r.answered) return false;
    }
    return true;
  };
  while (!all_answered() && clock_.Now() < deadline) {
    pollfd p{probe.fd(), POLLIN, 0};
    ::poll(&p, 1, PollMillis(deadline - clock_.Now()));
    ReceiveReady(probe);
  }
}

bool PacedUdpLoad::Lost(const Record& r, Duration patience) {
  return !r.answered || *r.answered - r.sent > patience;
}

size_t PacedUdpLoad::CountSent(std::optional<TimePoint> from, std::optional<TimePoint> to,
                               std::optional<Duration> lost_patience) const {
  size_t n = 0;
  for (const auto& r : records_) {
    if (from && r.sent < *from) continue;
    if (to && r.sent > *to) continue;
    if (lost_patience && !Lost(r, *lost_patience)) continue;
    ++n;
  }
  return n;
}

bool AllThreadsStopped(pid_t pid) {
  std::error_code ec;
  int threads = 0;
  for (const auto& task : fs::directory_iterator("/proc/" + std::to_string(pid) + "/task", ec)) {
    std::ifstream in(task.path() / "stat");
    std::string stat;
    std::getline(in, stat);
    // "TID (comm) STATE ...": comm may hold spaces and parentheses, the state follows the last ')'.
    const size_t close = stat.rfind(')');
    if (close == std::string::npos || close + 2 >= stat.size()) continue;  // the thread ended
    if (stat[close + 2] != 'T') return false;
    ++threads;
  }
  return !ec && threads > 0;
}

// ---- ClusterTest ----

std::string ClusterTest::PortClashLine(const std::string& work_dir) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(work_dir, ec)) {
    if (entry.path().extension() != ".log") continue;
    std::ifstream in(entry.path());
    for (std::string line; std::getline(in, line);) {
      if (line.find("listen") != std::string::npos &&
          line.find("Address already in use") != std::string::npos) {
        return entry.path().filename().string() + ": " + line;
      }
    }
  }
  return "";
}

void ClusterTest::SetUpTestSuite() { (void)SharedOracle(); }

void ClusterTest::StartCluster(const std::function<void(bench::LocalClusterOptions&)>& tweak) {
  work_dir_ = MakeTempDir("vsc-integration");
  bench::LocalClusterOptions options;
  options.vsc_binary = VSC_BINARY;
  options.work_dir = work_dir_;
  options.db_path = SharedDbPath();
  options.real_servers = kServers;
  options.scheduler = "rr";
  options.heartbeat_interval_ms = kHeartbeatMs;
  options.silent_after = kSilentAfter;
  options.down_after = kDownAfter;
  if (tweak) tweak(options);
  auto c = bench::LocalCluster::Start(options);
  // No second try: a port clash at start-up is a bug of BindTcpUdpPair (tests/unit/net/
  // port_pair_test.cc), and retrying would hide its regression. The clash line, if any, says so.
  if (!c.ok()) {
    const std::string clash = PortClashLine(work_dir_);
    FAIL() << c.status().ToString() << " (work dir " << work_dir_ << ")"
           << (clash.empty() ? "" : "; port clash: " + clash);
  }
  cluster_ = std::move(c).value();
  for (int i = 0; i < cluster_->size(); ++i) {
    ASSERT_TRUE(WaitForState(cluster_->server_id(i), "ACTIVE", 10s)) << "work dir " << work_dir_;
  }
}

void ClusterTest::TearDown() {
  if (cluster_) {
    cluster_->Stop();
    cluster_.reset();
  }
  if (work_dir_.empty()) return;
  if (HasFailure()) {
    std::fprintf(stderr, "logs of the failed test kept in %s\n", work_dir_.c_str());
  } else {
    std::error_code ec;
    fs::remove_all(work_dir_, ec);
  }
}

nlohmann::json ClusterTest::AdminStatus() {
  auto r = AdminHttpGet(cluster_->admin_port(), "/v1/status", cluster_->admin_token(), 5s);
  EXPECT_TRUE(r.ok() && r->first == 200) << (r.ok() ? r->second : r.status().ToString());
  nlohmann::json j = r.ok() && r->first == 200 ? nlohmann::json::parse(r->second, nullptr, false)
                                               : nlohmann::json();
  if (!j.is_discarded() && j.contains("services")) return j;
  ADD_FAILURE() << "/v1/status is not the expected JSON";
  nlohmann::json none = {{"servers", nlohmann::json::array()}};
  return {{"services", {none, none}}};
}

std::string ClusterTest::Metrics() {
  auto r = AdminHttpGet(cluster_->admin_port(), "/metrics", cluster_->admin_token(), 5s);
  EXPECT_TRUE(r.ok() && r->first == 200) << (r.ok() ? r->second : r.status().ToString());
  return r.ok() ? r->second : "";
}

std::string ClusterTest::State(const std::string& id) {
  const nlohmann::json status = AdminStatus();
  const nlohmann::json* s = FindServer(status, 0, id);
  return s ? s->at("state").get<std::string>() : "";
}

bool ClusterTest::WaitForState(const std::string& id, const std::string& state, Duration timeout) {
  std::string last;
  if (WaitUntil([&] { return (last = State(id)) == state; }, timeout)) return true;
  ADD_FAILURE() << id << " did not become " << state
                << " (last state: " << (last.empty() ? "unlisted" : last) << ")";
  return false;
}

double ClusterTest::Transitions(const std::string& from, const std::string& to) {
  // The exporter writes only the transitions that happened.
  auto v = MetricValue(Metrics(),
                       "vsc_membership_transitions_total{from=\"" + from + "\",to=\"" + to + "\"}");
  EXPECT_TRUE(v.ok() || v.status().code() == Code::kNotFound) << v.status().ToString();
  return v.ok() ? *v : 0;
}

double ClusterTest::Metric(const std::string& series) {
  auto v = MetricValue(Metrics(), series);
  EXPECT_TRUE(v.ok()) << v.status().ToString();
  return v.ok() ? *v : -1;
}

int ClusterTest::ServerIndexByPort(uint16_t port) const {
  for (int i = 0; i < cluster_->size(); ++i) {
    if (cluster_->server_lookup_port(i) == port) return i;
  }
  return -1;
}

std::vector<int> ClusterTest::UdpRoundTrips(int n, uint64_t seed, int* resends) {
  std::vector<int> per_server(cluster_->size(), 0);
  if (resends != nullptr) *resends = 0;
  auto probe = UdpProbe::Open(asio::ip::make_address(cluster_->host()).is_v6());
  EXPECT_TRUE(probe.ok()) << probe.status().ToString();
  if (!probe.ok()) return per_server;
  Random random(seed);
  const Oracle& oracle = SharedOracle();
  for (int i = 0; i < n; ++i) {
    std::vector<uint64_t> ids = {1 + random.Uniform(kRecords + 1000)};
    const uint64_t request_id = seed * 1'000'000 + static_cast<uint64_t>(i) + 1;
    auto bytes = EncodeLookup(request_id, ids);
    std::optional<UdpProbe::Datagram> answer;
    for (int attempt = 0; attempt < 2 && !answer; ++attempt) {
      if (attempt > 0 && resends != nullptr) ++*resends;
      EXPECT_TRUE(probe->SendTo(cluster_->lookup_port(), bytes).ok());
      // Skips a late answer to an earlier request.
      answer = probe->ReceiveAnswerTo(request_id, std::chrono::milliseconds(500));
    }
    if (!answer) {
      ADD_FAILURE() << "request " << i << " was never answered";
      return per_server;
    }
    auto r = proto::DecodeResponse(answer->bytes);
    EXPECT_TRUE(r.ok() && r->status == proto::LookupStatus::kOk && oracle.Matches(ids, r->answers))
        << "wrong answer for id " << ids[0];
    const int index = ServerIndexByPort(answer->from_port);
    EXPECT_GE(index, 0) << "answer from port " << answer->from_port
                        << ", which is no real server's";
    if (index >= 0) ++per_server[index];
  }
  return per_server;
}

}  // namespace vsc::integration

#include "integration/etcd_cluster.h"

#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>

#include "net/http_client.h"
#include "support/wait_until.h"

namespace vsc::integration {
namespace {

using namespace std::chrono_literals;

// A port no socket on 127.0.0.1 holds now: bound to 0, read back, closed. The listeners of the
// held sockets keep every number distinct within one call.
Result<std::vector<uint16_t>> FreePorts(size_t n) {
  std::vector<int> fds;
  std::vector<uint16_t> ports;
  Status err = Status::Ok();
  for (size_t i = 0; i < n && err.ok(); ++i) {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(a);
    if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0 ||
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
      err = ErrnoStatus("picking a free port", errno);
    } else {
      ports.push_back(ntohs(a.sin_port));
    }
    if (fd >= 0) fds.push_back(fd);
  }
  for (int fd : fds) ::close(fd);
  if (!err.ok()) return err;
  return ports;
}

}  // namespace

Result<std::unique_ptr<EtcdCluster>> EtcdCluster::Start(const std::string& dir, int members,
                                                        Duration timeout, EtcdPlacement placement) {
  if (::access(kEtcdBinary, X_OK) != 0) {
    return NotFound(std::string(kEtcdBinary) + " is missing: run scripts/install-deps");
  }
  std::unique_ptr<EtcdCluster> c(new EtcdCluster());
  c->dir_ = dir;
  c->placement_ = std::move(placement);
  std::vector<uint16_t> ports;
  if (c->placement_.first_port == 0) {
    VSC_ASSIGN_OR_RETURN(ports, FreePorts(2 * static_cast<size_t>(members)));
  } else {
    for (int i = 0; i < 2 * members; ++i) ports.push_back(c->placement_.first_port + i);
  }
  for (int i = 0; i < members; ++i) {
    Member m;
    m.name = "m" + std::to_string(i);
    m.client_port = ports[2 * i];
    m.peer_port = ports[2 * i + 1];
    if (!c->initial_cluster_.empty()) c->initial_cluster_ += ",";
    c->initial_cluster_ += m.name + "=" + c->Url(m.peer_port);
    c->members_.push_back(std::move(m));
  }
  for (int i = 0; i < members; ++i) VSC_RETURN_IF_ERROR(c->Spawn(i));
  EtcdCluster* raw = c.get();
  if (!test_support::WaitUntil([raw] { return raw->Healthy(0); }, timeout, 50ms)) {
    return Unavailable("etcd did not elect a leader within the timeout (see " + dir + "/m0.log)");
  }
  return c;
}

EtcdCluster::~EtcdCluster() {
  for (int i = 0; i < static_cast<int>(members_.size()); ++i) Kill(i);
}

Status EtcdCluster::Spawn(int i) {
  Member& m = members_[i];
  const std::string client = Url(m.client_port);
  const std::string peer = Url(m.peer_port);
  SpawnOptions so;
  so.argv = placement_.exec_prefix;
  so.argv.insert(so.argv.end(), {kEtcdBinary,
                                 "--name",
                                 m.name,
                                 "--data-dir",
                                 dir_ + "/" + m.name + ".etcd",
                                 "--listen-client-urls",
                                 client,
                                 "--advertise-client-urls",
                                 client,
                                 "--listen-peer-urls",
                                 peer,
                                 "--initial-advertise-peer-urls",
                                 peer,
                                 "--initial-cluster",
                                 initial_cluster_,
                                 "--initial-cluster-state",
                                 "new",
                                 "--initial-cluster-token",
                                 "vsc-test",
                                 "--heartbeat-interval",
                                 "50",
                                 "--election-timeout",
                                 "500",
                                 "--log-level",
                                 "warn"});
  so.log_path = dir_ + "/" + m.name + ".log";
  VSC_ASSIGN_OR_RETURN(Subprocess p, Subprocess::Spawn(so));
  m.process = std::make_unique<Subprocess>(std::move(p));
  return Status::Ok();
}

std::string EtcdCluster::Url(uint16_t port) const {
  return "http://" + placement_.host + ":" + std::to_string(port);
}

std::vector<std::string> EtcdCluster::ClientUrls() const {
  std::vector<std::string> out;
  for (const Member& m : members_) out.push_back(Url(m.client_port));
  return out;
}

void EtcdCluster::Kill(int i) {
  Member& m = members_[i];
  if (!m.process) return;
  (void)m.process->Signal(SIGKILL);
  m.process->Wait(5s);
  m.process.reset();
}

Status EtcdCluster::Restart(int i) {
  Kill(i);
  return Spawn(i);
}

bool EtcdCluster::Healthy(int i) const {
  Result<net::HttpResponse> r = Unavailable("not asked");
  auto ask = [&] {
    r = net::HttpRequestSync(placement_.host, members_[i].client_port, "GET", "/health", "", {},
                             500ms);
  };
  if (placement_.run_in) {
    if (!placement_.run_in(ask).ok()) return false;
  } else {
    ask();
  }
  return r.ok() && r->status == 200 && r->body.find("\"true\"") != std::string::npos;
}

}  // namespace vsc::integration

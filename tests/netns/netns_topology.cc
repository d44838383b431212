#include "netns/netns_topology.h"

#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

#include "common/subprocess.h"

namespace vsc::netns {
namespace {

using namespace std::chrono_literals;

bool Executable(const std::string& path) { return ::access(path.c_str(), X_OK) == 0; }

}  // namespace

std::string IpTool() {
  std::vector<std::string> dirs;
  if (const char* path = std::getenv("PATH")) {
    std::stringstream ss(path);
    std::string dir;
    while (std::getline(ss, dir, ':')) {
      if (!dir.empty()) dirs.push_back(dir);
    }
  }
  dirs.insert(dirs.end(), {"/usr/sbin", "/sbin", "/usr/bin", "/bin"});
  for (const auto& dir : dirs) {
    if (Executable(dir + "/ip")) return dir + "/ip";
  }
  return "";
}

Result<std::string> RunIp(const std::vector<std::string>& args) {
  const std::string ip = IpTool();
  std::string command = "ip";
  for (const auto& a : args) command += " " + a;
  if (ip.empty())
    return FailedPrecondition("`ip` (iproute2) is not installed; cannot run " + command);
  // The output goes to a file (Subprocess appends stdout and stderr there) so a failure can quote
  // what `ip` said.
  const std::string out_path = "/tmp/vsc-netns-" + std::to_string(::getpid()) + "-ip.out";
  ::unlink(out_path.c_str());
  SpawnOptions so;
  so.argv.push_back(ip);
  so.argv.insert(so.argv.end(), args.begin(), args.end());
  so.log_path = out_path;
  VSC_ASSIGN_OR_RETURN(auto proc, Subprocess::Spawn(so));
  std::optional<int> code = proc.Wait(10s);
  std::ifstream in(out_path);
  std::stringstream text;
  text << in.rdbuf();
  ::unlink(out_path.c_str());
  if (!code) return Unavailable(command + ": did not finish within 10 s");
  if (*code != 0) {
    return IoError(command + ": exit code " + std::to_string(*code) + ": " + text.str());
  }
  return text.str();
}

Result<std::unique_ptr<NetnsTopology>> NetnsTopology::Create(const std::vector<std::string>& hosts,
                                                             const std::string& subnet_prefix) {
  if (hosts.empty() || hosts.size() > 200) return InvalidArgument("1 to 200 hosts");
  std::unique_ptr<NetnsTopology> t(new NetnsTopology());
  const std::string prefix = "vsc" + std::to_string(::getpid()) + "-";
  t->bridge_ns_ = prefix + "br";
  VSC_RETURN_IF_ERROR(t->AddNamespace(t->bridge_ns_));
  VSC_RETURN_IF_ERROR(
      RunIp({"-n", t->bridge_ns_, "link", "add", "br0", "type", "bridge"}).status());
  VSC_RETURN_IF_ERROR(RunIp({"-n", t->bridge_ns_, "link", "set", "br0", "up"}).status());
  for (size_t i = 0; i < hosts.size(); ++i) {
    Host h{hosts[i], prefix + hosts[i], subnet_prefix + std::to_string(i + 1)};
    VSC_RETURN_IF_ERROR(t->AddNamespace(h.ns));
    // The bridge side is named after the host's index (interface names are limited to 15 bytes);
    // the host side is created directly inside the host's namespace.
    const std::string port = "p" + std::to_string(i);
    VSC_RETURN_IF_ERROR(RunIp({"-n", t->bridge_ns_, "link", "add", port, "type", "veth", "peer",
                               "name", "eth0", "netns", h.ns})
                            .status());
    VSC_RETURN_IF_ERROR(
        RunIp({"-n", t->bridge_ns_, "link", "set", port, "master", "br0"}).status());
    VSC_RETURN_IF_ERROR(RunIp({"-n", t->bridge_ns_, "link", "set", port, "up"}).status());
    VSC_RETURN_IF_ERROR(
        RunIp({"-n", h.ns, "addr", "add", h.address + "/24", "dev", "eth0"}).status());
    VSC_RETURN_IF_ERROR(RunIp({"-n", h.ns, "link", "set", "eth0", "up"}).status());
    VSC_RETURN_IF_ERROR(RunIp({"-n", h.ns, "link", "set", "lo", "up"}).status());
    t->hosts_.push_back(std::move(h));
  }
  return t;
}

Status NetnsTopology::AddNamespace(const std::string& ns) {
  VSC_RETURN_IF_ERROR(RunIp({"netns", "add", ns}).status());
  created_.push_back(ns);
  return Status::Ok();
}

NetnsTopology::~NetnsTopology() {
  for (auto it = created_.rbegin(); it != created_.rend(); ++it) {
    RunIp({"netns", "del", *it}).status().ok();  // best effort: keep deleting the others
  }
}

const NetnsTopology::Host& NetnsTopology::Find(const std::string& host) const {
  for (const auto& h : hosts_) {
    if (h.name == host) return h;
  }
  std::fprintf(stderr, "NetnsTopology: no host named %s\n", host.c_str());
  std::abort();
}

const std::string& NetnsTopology::Namespace(const std::string& host) const { return Find(host).ns; }
const std::string& NetnsTopology::Address(const std::string& host) const {
  return Find(host).address;
}

Status NetnsTopology::RunIn(const std::string& host, const std::function<void()>& fn) const {
  const std::string path = "/var/run/netns/" + Find(host).ns;
  Status result = Status::Ok();
  // A thread of its own: setns changes only the calling thread's namespace, and this thread ends
  // right after, so the caller's thread never leaves its namespace.
  std::thread t([&] {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      result = ErrnoStatus("open " + path, errno);
      return;
    }
    if (::setns(fd, CLONE_NEWNET) != 0) {
      result = ErrnoStatus("setns " + path, errno);
      ::close(fd);
      return;
    }
    ::close(fd);
    fn();
  });
  t.join();
  return result;
}

}  // namespace vsc::netns

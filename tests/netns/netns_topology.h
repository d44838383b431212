// NetnsTopology: a private L2 network of network namespaces for multi-host tests. One namespace
// holds a bridge; every host gets its own namespace joined to the bridge by a veth pair, with
// loopback up and one address in a private /24 (10.213.0.0/24 by default). No address or route is
// added outside the namespaces created here, so test traffic cannot leave them.
//
// Names carry the test's pid ("vsc<pid>-<host>"), so parallel runs do not collide. The destructor
// deletes every namespace it created (their veths go with them), also when a test assertion
// failed, so nothing is left behind. Processes still running inside would keep a namespace alive:
// stop them before the topology is destroyed.
//
// Needs root (CAP_SYS_ADMIN and CAP_NET_ADMIN) and the `ip` tool. Not thread safe; one owner.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"

namespace vsc::netns {

// Path of the `ip` tool ("" when neither $PATH nor /sbin, /usr/sbin have it).
std::string IpTool();

// Runs `ip args...` and waits for it (10 s at most). Returns its output on success; on failure an
// error naming the command, its exit code and its output.
Result<std::string> RunIp(const std::vector<std::string>& args);

class NetnsTopology {
 public:
  // Creates the bridge namespace and one namespace per host, host i getting address
  // `subnet_prefix` + (i + 1) (e.g. 10.213.0.1 for the first). Returns the first failing `ip`
  // command's error (with everything created so far deleted again).
  static Result<std::unique_ptr<NetnsTopology>> Create(
      const std::vector<std::string>& hosts, const std::string& subnet_prefix = "10.213.0.");
  ~NetnsTopology();
  NetnsTopology(const NetnsTopology&) = delete;
  NetnsTopology& operator=(const NetnsTopology&) = delete;

  // Namespace name and address of a host given to Create (aborts on an unknown host).
  const std::string& Namespace(const std::string& host) const;
  const std::string& Address(const std::string& host) const;

  // Runs `fn` on a fresh thread that has joined the host's network namespace and returns after
  // it finished. Sockets created by `fn` stay in that namespace after the thread ends, so a test
  // can open a socket "on" a host and use it from its own thread. Fails (without running `fn`)
  // when the namespace cannot be entered.
  Status RunIn(const std::string& host, const std::function<void()>& fn) const;

 private:
  struct Host {
    std::string name, ns, address;
  };
  NetnsTopology() = default;
  const Host& Find(const std::string& host) const;
  Status AddNamespace(const std::string& ns);

  std::vector<std::string> created_;  // namespaces to delete, in creation order
  std::string bridge_ns_;
  std::vector<Host> hosts_;
};

}  // namespace vsc::netns

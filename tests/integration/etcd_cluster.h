// EtcdCluster: real `etcd` members (Debian's etcd-server) as child processes on 127.0.0.1, each
// with its own data directory under `dir`, for the director standby tests (issue 11). Ports are
// free ones the kernel picked a moment before (etcd cannot be given port 0 and report back).
// Fast elections (heartbeat 50 ms, election timeout 500 ms) so that a lost quorum and a new
// leader are seen within a second. Members can be killed (SIGKILL) and started again on the same
// data. Test thread only; every member is killed by the destructor (and with the test process:
// PR_SET_PDEATHSIG). An EtcdPlacement puts the members elsewhere, e.g. in a network namespace
// (tests/netns/netns_vrrp_test.cc).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "common/subprocess.h"

namespace vsc::integration {

inline constexpr const char* kEtcdBinary = "/usr/bin/etcd";

// Where the members listen and run. The default: free ports on 127.0.0.1 of this namespace.
struct EtcdPlacement {
  std::string host = "127.0.0.1";
  // With first_port set, member i takes first_port + 2i (clients) and + 2i + 1 (peers), e.g. in
  // a fresh namespace where every port is free.
  uint16_t first_port = 0;
  std::vector<std::string> exec_prefix;  // before etcd's argv, e.g. ip netns exec NS
  // Runs the health check's request where `host` is reachable; null: on the calling thread.
  std::function<Status(const std::function<void()>&)> run_in;
};

class EtcdCluster {
 public:
  // Starts `members` members and waits (at most `timeout`) until the cluster has a leader.
  static Result<std::unique_ptr<EtcdCluster>> Start(const std::string& dir, int members,
                                                    Duration timeout, EtcdPlacement placement = {});
  ~EtcdCluster();

  // "http://HOST:PORT" of every member, in order.
  std::vector<std::string> ClientUrls() const;
  void Kill(int member);
  Status Restart(int member);
  // Whether member `i` answers /health with a leader.
  bool Healthy(int member) const;

 private:
  struct Member {
    std::string name;
    uint16_t client_port = 0;
    uint16_t peer_port = 0;
    std::unique_ptr<Subprocess> process;
  };
  Status Spawn(int member);

  std::string Url(uint16_t port) const;

  std::string dir_;
  EtcdPlacement placement_;
  std::string initial_cluster_;
  std::vector<Member> members_;
};

}  // namespace vsc::integration

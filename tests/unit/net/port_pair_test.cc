// BindTcpUdpPair: one number for a TCP listener and a UDP socket. The clash that port 0 must
// survive (the kernel's TCP choice already taken for UDP) is forced in a private network
// namespace whose ephemeral range holds two numbers, on a thread of its own (a namespace belongs
// to the thread that entered it), so that the test does not depend on this machine's ports.
#include "net/port_pair.h"

#include <gtest/gtest.h>
#include <net/if.h>
#include <sched.h>
#include <sys/ioctl.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <thread>

#include "common/unique_fd.h"
#include "net_test_util.h"

namespace vsc::net {
namespace {

using testing::Loopback;

// A plain socket of `type` bound to 127.0.0.1:port (listening when TCP), or an invalid fd.
UniqueFd BindPlain(int type, uint16_t port) {
  UniqueFd fd(::socket(AF_INET, type | SOCK_CLOEXEC, 0));
  sockaddr_in a = Loopback(port);
  if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) return UniqueFd();
  if (type == SOCK_STREAM && ::listen(fd.get(), 4) != 0) return UniqueFd();
  return fd;
}

// Whether a socket this process holds LISTENs on TCP `port`: its open fds' socket inodes
// against the LISTEN rows (state 0A) of /proc/net/tcp. Another test binary's listener on the
// same number (ctest -j 2 runs them side by side) is not ours and does not count.
bool ThisProcessListensOn(uint16_t port) {
  std::set<std::string> inodes;
  for (const auto& fd : std::filesystem::directory_iterator("/proc/self/fd")) {
    std::error_code ec;
    const std::string target = std::filesystem::read_symlink(fd.path(), ec).string();
    if (!ec && target.rfind("socket:[", 0) == 0) {
      inodes.insert(target.substr(8, target.size() - 9));
    }
  }
  std::ifstream tcp("/proc/net/tcp");
  std::string line;
  std::getline(tcp, line);  // the header
  while (std::getline(tcp, line)) {
    std::istringstream row(line);
    std::string slot, local, remote, state, queues, timer, retransmits, uid, timeout, inode;
    row >> slot >> local >> remote >> state >> queues >> timer >> retransmits >> uid >> timeout >>
        inode;
    const size_t colon = local.find(':');
    if (colon == std::string::npos || state != "0A") continue;
    if (std::stoul(local.substr(colon + 1), nullptr, 16) == port && inodes.count(inode) != 0) {
      return true;
    }
  }
  return false;
}

uint16_t LocalPort(int fd) {
  sockaddr_in a{};
  socklen_t len = sizeof(a);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  return ntohs(a.sin_port);
}

TEST(PortPairTest, PortZeroGivesBothSocketsOneNumber) {
  asio::io_context io;
  auto pair = BindTcpUdpPair(io, asio::ip::address_v4::loopback(), 0, {});
  ASSERT_TRUE(pair.ok()) << pair.status().ToString();
  ASSERT_NE(pair->port, 0);
  EXPECT_EQ(pair->tcp->local_port(), pair->port);
  EXPECT_EQ(pair->udp->local_port(), pair->port);
  // Both numbers are really held: neither can be bound a second time.
  EXPECT_FALSE(BindPlain(SOCK_DGRAM, pair->port).valid());
  EXPECT_FALSE(BindPlain(SOCK_STREAM, pair->port).valid());
}

TEST(PortPairTest, AFixedPortTakenForUdpFailsAndReleasesTheListener) {
  UniqueFd udp = BindPlain(SOCK_DGRAM, 0);
  ASSERT_TRUE(udp.valid());
  const uint16_t taken = LocalPort(udp.get());
  asio::io_context io;
  auto pair = BindTcpUdpPair(io, asio::ip::address_v4::loopback(), taken, {});
  ASSERT_FALSE(pair.ok());
  EXPECT_NE(pair.status().message().find("Address already in use"), std::string::npos)
      << pair.status().ToString();
  EXPECT_NE(pair.status().message().find(std::to_string(taken)), std::string::npos)
      << pair.status().ToString();
  EXPECT_FALSE(ThisProcessListensOn(taken)) << "the TCP listener was left bound";
}

TEST(PortPairTest, AFixedPortTakenForTcpFails) {
  UniqueFd tcp = BindPlain(SOCK_STREAM, 0);
  ASSERT_TRUE(tcp.valid());
  const uint16_t taken = LocalPort(tcp.get());
  asio::io_context io;
  auto pair = BindTcpUdpPair(io, asio::ip::address_v4::loopback(), taken, {});
  ASSERT_FALSE(pair.ok());
  EXPECT_NE(pair.status().message().find("Address already in use"), std::string::npos)
      << pair.status().ToString();
  EXPECT_TRUE(BindPlain(SOCK_DGRAM, taken).valid()) << "a UDP socket was left bound";
}

// What the thread in a private namespace saw; `skip` is set when it could not get there.
struct NamespaceRun {
  std::string skip;
  std::string error;
  uint16_t port = 0;
  bool clash_released = false;
};

// Enters a new network namespace with loopback up and ip_local_port_range "low low+1".
std::string EnterNarrowNamespace(uint16_t low) {
  if (::unshare(CLONE_NEWNET) != 0) {
    return std::string("unshare(CLONE_NEWNET): ") + std::strerror(errno) + " (needs root)";
  }
  UniqueFd s(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  ifreq ifr{};
  std::strncpy(ifr.ifr_name, "lo", IFNAMSIZ - 1);
  ifr.ifr_flags = IFF_UP | IFF_LOOPBACK | IFF_RUNNING;
  if (::ioctl(s.get(), SIOCSIFFLAGS, &ifr) != 0) {
    return std::string("bringing lo up: ") + std::strerror(errno);
  }
  std::ofstream range("/proc/sys/net/ipv4/ip_local_port_range");
  range << low << " " << low + 1 << "\n";
  range.flush();
  if (!range) return "cannot write this namespace's ip_local_port_range";
  return "";
}

void RunInNarrowNamespace(NamespaceRun& run) {
  constexpr uint16_t kLow = 40000;
  run.skip = EnterNarrowNamespace(kLow);
  if (!run.skip.empty()) return;
  // bind(0) prefers numbers of the other parity than the range's start (Linux leaves the start's
  // parity to connect()), so a TCP listener on port 0 gets kLow + 1 first. Take that for UDP.
  UniqueFd probe = BindPlain(SOCK_STREAM, 0);
  if (!probe.valid() || LocalPort(probe.get()) != kLow + 1) {
    run.skip = "this kernel does not pick the odd number of the range first";
    return;
  }
  probe.Reset();
  UniqueFd udp = BindPlain(SOCK_DGRAM, kLow + 1);
  if (!udp.valid()) {
    run.error = "cannot bind UDP " + std::to_string(kLow + 1);
    return;
  }
  asio::io_context io;
  auto pair = BindTcpUdpPair(io, asio::ip::address_v4::loopback(), 0, {});
  if (!pair.ok()) {
    run.error = pair.status().ToString();
    return;
  }
  run.port = pair->port;
  // The listener that clashed was released once the pair was found.
  run.clash_released = BindPlain(SOCK_STREAM, kLow + 1).valid();
}

TEST(PortPairTest, PortZeroMovesPastANumberTakenForUdp) {
  NamespaceRun run;
  std::thread t([&run] { RunInNarrowNamespace(run); });
  t.join();
  if (!run.skip.empty()) GTEST_SKIP() << run.skip;
  ASSERT_TRUE(run.error.empty()) << run.error;
  EXPECT_EQ(run.port, 40000) << "the only number free for both";
  EXPECT_TRUE(run.clash_released) << "the clashing listener is still bound";
}

}  // namespace
}  // namespace vsc::net

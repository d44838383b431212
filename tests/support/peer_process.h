// Real peers for integration tests (nginx, redis-server, dnsmasq, …) as child processes on
// 127.0.0.x or ::1 (hosts are numeric addresses, IPv6 without brackets): a port free for both TCP
// and UDP, "accepts connections", a child that is waited for until it serves, and one nginx
// answering a fixed body (nginx_conf.h). Header-only.
#pragma once

#include <gtest/gtest.h>
#include <signal.h>

#include <asio.hpp>
#include <chrono>
#include <cstdint>
#include <fstream>
#include <optional>
#include <random>
#include <string>

#include "common/subprocess.h"
#include "support/nginx_conf.h"
#include "support/wait_until.h"

namespace vsc::test_support {

inline constexpr const char* kNginxBinary = "/usr/sbin/nginx";

// The lowest port the kernel hands out by itself (bind to port 0, a connect's source port).
inline uint16_t EphemeralLow() {
  std::ifstream range("/proc/sys/net/ipv4/ip_local_port_range");
  unsigned low = 32768;
  range >> low;
  return static_cast<uint16_t>(low > 12000 ? low : 32768);
}

// A port of `host` that is free for TCP and for UDP (dnsmasq binds both), chosen below the
// kernel's ephemeral range: a port the kernel chose would be free again once this returns, and
// a process starting meanwhile (a real server binding port 0, any outgoing connection) could
// be given it before the test's own process binds it.
inline uint16_t FreePort(const char* host) {
  static std::mt19937 random(std::random_device{}());
  const asio::ip::address address = asio::ip::make_address(host);
  std::uniform_int_distribution<int> pick(10000, EphemeralLow() - 1);
  for (;;) {
    const auto port = static_cast<uint16_t>(pick(random));
    asio::io_context io;
    asio::error_code ec;
    asio::ip::tcp::acceptor a(io);
    a.open(address.is_v6() ? asio::ip::tcp::v6() : asio::ip::tcp::v4(), ec);
    if (!ec) a.bind({address, port}, ec);
    if (ec) continue;
    asio::ip::udp::socket u(io);
    u.open(address.is_v6() ? asio::ip::udp::v6() : asio::ip::udp::v4(), ec);
    if (!ec) u.bind({address, port}, ec);
    if (!ec) return port;
  }
}

inline bool Connectable(const char* host, uint16_t port) {
  asio::io_context io;
  asio::ip::tcp::socket s(io);
  asio::error_code ec;
  s.connect({asio::ip::make_address(host), port}, ec);
  return !ec;
}

// A child process that serves host:port, once it accepts connections (10 s at most); nullopt
// (and a test failure saying why) when it does not.
inline std::optional<Subprocess> SpawnServer(const SpawnOptions& o, const char* host,
                                             uint16_t port) {
  auto p = Subprocess::Spawn(o);
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  if (!p.ok()) return std::nullopt;
  const bool up = WaitUntil([&] { return Connectable(host, port); },
                            std::chrono::milliseconds(10000), std::chrono::milliseconds(20));
  EXPECT_TRUE(up) << o.argv[0] << " on " << host << ":" << port << " did not start; see "
                  << o.log_path;
  if (!up) return std::nullopt;  // ~Subprocess kills it
  return std::move(p).value();
}

// One nginx answering `body` on host:port, its configuration in its own directory.
class NginxProcess {
 public:
  NginxProcess(const std::string& dir, const char* host, uint16_t port, const std::string& body)
      : dir_(dir), host_(host), port_(port) {
    WriteNginxConf(dir, host, port, body);
  }
  void Start() {
    SpawnOptions o;
    o.argv = {kNginxBinary, "-p", dir_, "-c", dir_ + "/nginx.conf", "-e", dir_ + "/error.log"};
    o.log_path = dir_ + "/out.log";
    proc_ = SpawnServer(o, host_, port_);
    ASSERT_TRUE(proc_.has_value());
  }
  void Kill() {
    if (!proc_) return;
    (void)proc_->Signal(SIGKILL);
    proc_->Wait(std::chrono::seconds(5));
    proc_.reset();
  }
  const char* host() const { return host_; }
  uint16_t port() const { return port_; }
  std::string address() const { return std::string(host_) + ":" + std::to_string(port_); }

 private:
  std::string dir_;
  const char* host_;
  uint16_t port_;
  std::optional<Subprocess> proc_;
};

}  // namespace vsc::test_support

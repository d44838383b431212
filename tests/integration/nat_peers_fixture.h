// The fixture of the tests that put virtual services in front of real Debian servers running no
// agent (issue 12; nat_peers_test.cc over IPv4, nat_ipv6_test.cc over ::1): a director in this
// process on port-0 ports, its table edited and read on its control thread, and the shell
// helpers that drive the peers' own clients (curl, dig, redis-cli). Header-only.
#pragma once

#include <gtest/gtest.h>

#include <asio.hpp>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <future>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>

#include "common/clock.h"
#include "director/director.h"
#include "support/peer_process.h"
#include "support/temp_dir.h"
#include "support/wait_until.h"

namespace vsc::director {

inline constexpr const char* kNginx = test_support::kNginxBinary;
inline constexpr const char* kDnsmasq = "/usr/sbin/dnsmasq";
inline constexpr const char* kDig = "/usr/bin/dig";
inline constexpr const char* kCurl = "/usr/bin/curl";

inline vservice::AddrPort At(const char* host, uint16_t port) {
  return {*vservice::IpAddress::Parse(host), port};
}

// Runs `command` under sh; its standard output, and its exit status in *exit_status if given.
inline std::string Shell(const std::string& command, int* exit_status = nullptr) {
  std::string out;
  FILE* p = ::popen(command.c_str(), "r");
  if (p == nullptr) return out;
  char buf[512];
  while (size_t n = std::fread(buf, 1, sizeof(buf), p)) out.append(buf, n);
  const int status = ::pclose(p);
  if (exit_status != nullptr) *exit_status = status;
  return out;
}

// One nginx answering a fixed body (test_support::NginxProcess), addressed as a destination.
class Nginx : public test_support::NginxProcess {
 public:
  using NginxProcess::NginxProcess;
  vservice::AddrPort addr() const { return At(host(), port()); }
};

// `tools` must exist; a test fails at once, saying what to install, when one does not.
inline void RequireTools(std::initializer_list<const char*> tools) {
  for (const char* tool : tools) {
    if (!std::filesystem::exists(tool)) {
      FAIL() << tool << " is not installed; run scripts/install-deps (make test does)";
    }
  }
}

inline proto::ClusterKey NatPeersTestKey() {
  std::array<uint8_t, proto::ClusterKey::kBytes> b;
  b.fill(5);
  return proto::ClusterKey::FromBytes(b);
}

// Two destinations behind `key`, rr, no check configured (DefaultStaticCheck) unless `check`.
inline vservice::VirtualServiceTable TwoBackends(
    const vservice::ServiceKey& key, const vservice::AddrPort& a, const vservice::AddrPort& b,
    std::optional<vservice::CheckConfig> check = std::nullopt) {
  vservice::VirtualServiceTable t;
  vservice::ServiceConfig rr;
  rr.scheduler = "rr";
  EXPECT_TRUE(t.AddService(key, rr).ok());
  vservice::DestConfig d;
  d.check = check;
  EXPECT_TRUE(t.AddDest(key, a, d).ok());
  EXPECT_TRUE(t.AddDest(key, b, d).ok());
  return t;
}

class DirectorInProcessTest : public ::testing::Test {
 protected:
  void TearDown() override {
    if (director_) director_->Stop();
  }

  // Starts the director with `table` as its configured services (as the TOML loader gives it).
  void StartDirector(vservice::VirtualServiceTable table) {
    DirectorConfig c;
    c.lookup_port = c.control_port = c.heartbeat_port = c.admin_port = 0;
    c.ring_port = c.write_port = c.sql_port = c.http_port =
        0;  // port 0: no clash with a running director
    c.workers = 2;
    c.insecure = true;
    c.log_file = dir_.File("director-log.db");  // absent: replication off
    c.services = std::move(table);
    director_ = std::make_unique<Director>(c, NatPeersTestKey(), "token", clock_);
    Status s = director_->Start();
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  template <class F>
  auto OnControl(F f) -> decltype(f()) {
    std::packaged_task<decltype(f())()> task(std::move(f));
    auto result = task.get_future();
    asio::post(director_->control_context(), [&task] { task(); });
    return result.get();
  }
  DestRuntime Dest(const vservice::ServiceKey& key, const vservice::AddrPort& addr) {
    return OnControl([&] {
      for (const ServiceRuntime& r : director_->services().Runtime()) {
        if (!(r.key == key)) continue;
        for (const DestRuntime& d : r.dests) {
          if (d.dest == addr) return d;
        }
      }
      return DestRuntime{};
    });
  }
  Status Edit(const std::function<Status(vservice::VirtualServiceTable&)>& edit) {
    return OnControl([&] {
      vservice::VirtualServiceTable next = director_->services().table();
      VSC_RETURN_IF_ERROR(edit(next));
      return director_->services().Commit(std::move(next)).status();
    });
  }

  test_support::TempDir dir_;
  RealClock clock_;
  std::unique_ptr<Director> director_;
};

}  // namespace vsc::director

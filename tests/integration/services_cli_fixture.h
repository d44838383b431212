// The fixture of the tests that drive a real `vsc director` process's virtual-service table
// as an operator does (issue 12; services_cli_test.cc, services_ipv6_test.cc): a director with
// port-0 ports and one configured [[service]] in a temporary directory, `vsc adm` against its
// admin API, its table in ipvsadm's save format, and its descriptor limit. Header-only.
#pragma once

#include <gtest/gtest.h>

#include <asio.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "common/subprocess.h"
#include "integration/cluster_harness.h"
#include "integration/vsc_process.h"

namespace vsc::integration {

using namespace std::chrono_literals;

// The services of `vsc adm -S -n` output that are not the built-in lookup entries (on the
// director's port-0 lookup port, different at every start).
inline std::string UserRules(const std::string& saved, uint16_t lookup_port) {
  std::string out;
  std::istringstream in(saved);
  const std::string builtin = ":" + std::to_string(lookup_port) + " ";
  for (std::string line; std::getline(in, line);) {
    if ((line + " ").find(builtin) == std::string::npos) out += line + "\n";
  }
  return out;
}

// A free loopback port of `protocol`'s kind (bound and released).
template <typename Protocol>
inline uint16_t FreePort() {
  asio::io_context io;
  typename Protocol::socket s(io, {asio::ip::address_v4::loopback(), 0});
  return s.local_endpoint().port();
}

// The `vsc adm -L -c -n` line that contains every one of `parts`, or "".
inline std::string ConnectionLine(const std::string& listing,
                                  const std::vector<std::string>& parts) {
  std::istringstream in(listing);
  for (std::string line; std::getline(in, line);) {
    bool all = true;
    for (const std::string& p : parts) all = all && line.find(p) != std::string::npos;
    if (all) return line;
  }
  return "";
}

class ServicesCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = MakeTempDir("vsc-services");
    std::ofstream(dir_ + "/d.toml") << "[director]\ninsecure = true\nlookup_port = 0\n"
                                       "control_port = 0\nheartbeat_port = 0\nadmin_port = 0\n"
                                       "ring_port = 0\nhttp_port = 0\nworkers = 1\n"
                                       "ready_file = \"ready.json\"\n\n"
                                       "[[service]]\nprotocol = \"tcp\"\n"
                                       "address = \"127.0.0.1:1\"\nlb_algo = \"rr\"\n";
  }

  void StartDirector() {
    std::remove((dir_ + "/ready.json").c_str());
    SpawnOptions so;
    so.argv = {VSC_BINARY, "director", "--config", dir_ + "/d.toml"};
    so.cwd = dir_;
    so.log_path = dir_ + "/director.log";
    auto proc = Subprocess::Spawn(so);
    ASSERT_TRUE(proc.ok()) << proc.status().ToString();
    director_.emplace(std::move(proc).value());
    auto ready = WaitForFile(dir_ + "/ready.json", 20s, &*director_);
    ASSERT_TRUE(ready.ok()) << ready.status().ToString() << ReadFile(so.log_path);
    auto j = nlohmann::json::parse(*ready);
    admin_port_ = j.at("admin_port").get<uint16_t>();
    lookup_port_ = j.at("lookup_port").get<uint16_t>();
  }

  std::pair<int, std::string> Adm(const std::vector<std::string>& args) {
    return RunAdm(dir_, admin_port_, dir_ + "/director-admin.token", args);
  }

  // Adds a TCP rr service in front of `backend_port` (a TCP_CHECK every 600 s) to the
  // configuration, starts the director and waits for the check; returns the service's port.
  uint16_t StartWithOneService(uint16_t backend_port) {
    const uint16_t vport = FreePort<asio::ip::tcp>();
    std::ofstream(dir_ + "/d.toml", std::ios::app)
        << "[[service]]\nprotocol = \"tcp\"\naddress = \"127.0.0.1:" << vport
        << "\"\nlb_algo = \"rr\"\n"
        << "[[service.server]]\naddress = \"127.0.0.1:" << backend_port << "\"\n"
        << "[service.server.check]\ntype = \"TCP_CHECK\"\ndelay_loop = \"600s\"\n";
    StartDirector();
    EXPECT_TRUE(WaitUntil(
        [&] {
          return Adm({"-L", "-n"}).second.find(" UP") != std::string::npos;
        },
        20s, 100ms));
    return vport;
  }

  // The running director's soft RLIMIT_NOFILE, set with prlimit(1); the hard limit stays, so a
  // lowered limit can be raised again without CAP_SYS_RESOURCE.
  bool Prlimit(int64_t limit) {
    SpawnOptions so;
    so.argv = {"/usr/bin/prlimit", "--pid", std::to_string(director_->pid()),
               "--nofile=" + std::to_string(limit) + ":"};
    so.log_path = dir_ + "/prlimit.log";
    auto pl = Subprocess::Spawn(so);
    const bool ok = pl.ok() && pl->Wait(10s) == 0;
    EXPECT_TRUE(ok) << ReadFile(so.log_path);
    return ok;
  }

  // The lowest descriptor number the director does not hold, once that figure has stayed the
  // same for 200 ms (an admin connection just answered may still be closing).
  int64_t LowestFreeDescriptor() {
    auto lowest = [&] {
      std::set<int64_t> used;
      const std::string fds = "/proc/" + std::to_string(director_->pid()) + "/fd";
      for (const auto& e : std::filesystem::directory_iterator(fds)) {
        used.insert(std::stoll(e.path().filename().string()));
      }
      int64_t n = 0;
      while (used.contains(n)) ++n;
      return n;
    };
    int64_t previous = -1;
    EXPECT_TRUE(WaitUntil(
        [&] {
          const int64_t n = lowest();
          return std::exchange(previous, n) == n;
        },
        10s, 200ms));
    return previous;
  }

  int64_t DescriptorsHeld() {
    const std::string fds = "/proc/" + std::to_string(director_->pid()) + "/fd";
    return std::distance(std::filesystem::directory_iterator(fds), {});
  }

  // `vsc adm -R < FILE` with `rules` in FILE, as an operator restores a saved table.
  bool Restore(const std::string& rules) {
    const std::string file = dir_ + "/rules";
    std::ofstream(file) << rules;
    SpawnOptions so;
    so.argv = {"/bin/sh", "-c",
               std::string(VSC_BINARY) + " adm --admin 127.0.0.1:" + std::to_string(admin_port_) +
                   " --token-file " + dir_ + "/director-admin.token -R < " + file};
    so.log_path = dir_ + "/restore.out";
    auto restore = Subprocess::Spawn(so);
    const bool ok = restore.ok() && restore->Wait(20s) == 0;
    EXPECT_TRUE(ok) << ReadFile(so.log_path);
    return ok;
  }

  std::string Saved() {
    auto [code, out] = Adm({"-S", "-n"});
    EXPECT_EQ(code, 0) << out;
    return UserRules(out, lookup_port_);
  }

  std::string dir_;
  std::optional<Subprocess> director_;
  uint16_t admin_port_ = 0;
  uint16_t lookup_port_ = 0;
};

}  // namespace vsc::integration

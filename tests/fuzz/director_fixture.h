// A director's replication core for the fuzz targets: a ControlPlane and a Replicator on a new
// log (in the fuzz temporary directory, fuzz_temp.h) whose bootstrap database holds
// table t(id INTEGER PRIMARY KEY, v TEXT) (testing::MakeBootstrap). Each fixture is fresh, so a
// fuzz input's outcome never depends on the inputs before it. The event loop is polled by hand;
// no timer runs. Thread: the fuzzer's.
#pragma once

#include <asio.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include "common/clock.h"
#include "director/control_plane.h"
#include "director/replicator.h"
#include "fuzz_temp.h"
#include "replication/replica_store.h"
#include "testing/fake_replica.h"

namespace vsc::fuzz {

class DirectorFixture {
 public:
  DirectorFixture() : plane_(membership::Config{std::chrono::milliseconds(100), 2, 5}, {}) {
    RemoveDatabase(Dir() + "/log.db");
    director::ReplicatorOptions o;
    o.log_file = Dir() + "/log.db";
    o.schema_db = Dir() + "/boot.db";
    o.update_queue = 16;  // small, so that the fuzzer reaches "overloaded"
    auto r = director::Replicator::Open(io_, plane_, clock_, o);
    if (!r.ok()) Fail(r.status().ToString());
    rep_ = std::move(r).value();
  }

  // The bootstrap's logical checksum: what a replica at seq 0 registers with.
  static const std::string& BootChecksum() {
    static const std::string sum = [] {
      auto s = replication::Checksum(Dir() + "/boot.db");
      if (!s.ok()) Fail(s.status().ToString());
      return *s;
    }();
    return sum;
  }

  // Registers `r` the way a control session does (Admit, OnRegister, Attach), then heartbeats.
  void Join(testing::FakeReplica& r) {
    const proto::Register reg = r.Register();
    const director::Admission a = rep_->Admit(reg);
    if (r.session == 0) r.session = ++sessions_;
    if (!plane_.OnRegister(reg, r.session, 7101, clock_.Now(), a.needs_catch_up()).accepted()) {
      std::abort();
    }
    rep_->Attach(reg, a, r.link);
    plane_.OnHeartbeat(r.Heartbeat(), clock_.Now());
  }

  void Poll() {
    io_.restart();
    io_.poll();
  }

  asio::io_context& io() { return io_; }
  ManualClock& clock() { return clock_; }
  director::ControlPlane& plane() { return plane_; }
  director::Replicator& rep() { return *rep_; }

 private:
  // The temporary directory, with the bootstrap database made once.
  static const std::string& Dir() {
    static const std::string dir = [] {
      testing::MakeBootstrap(TempDir() + "/boot.db");
      return TempDir();
    }();
    return dir;
  }

  asio::io_context io_;
  ManualClock clock_;
  director::ControlPlane plane_;
  uint64_t sessions_ = 0;  // control session numbers handed out by Join
  std::unique_ptr<director::Replicator> rep_;
};

}  // namespace vsc::fuzz

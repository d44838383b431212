// Shared by the replica tests: entries whose effects depend on random() and 'now', the reference
// state applied by the core library alone, a Replica with recording hooks, and a peer serving
// GET /v1/snapshot on a thread.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <asio.hpp>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "net/http_server.h"
#include "realserver/replica.h"
#include "realserver/replication_wire.h"
#include "realserver/snapshot.h"
#include "realserver/snapshot_server.h"
#include "replication/applier.h"
#include "support/temp_dir.h"
#include "support/test_key.h"

namespace vsc::realserver {

using test_support::TestKey;

// Entry 1 creates the table; the others insert rows whose values depend on random() and 'now',
// so equal digests and checksums also prove the deterministic functions agree.
inline proto::LogEntry MakeEntry(uint64_t seq) {
  proto::LogEntry e;
  e.set_epoch(1);
  e.set_seq(seq);
  e.set_ts_micros(1'700'000'000'000'000 + static_cast<int64_t>(seq) * 1000);
  auto* s = e.add_statements();
  if (seq == 1) {
    s->set_sql(
        "CREATE TABLE t(id INTEGER PRIMARY KEY, r INTEGER, at TEXT DEFAULT CURRENT_TIMESTAMP)");
  } else if (seq % 7 == 0) {
    s->set_sql("INSERT INTO t(id, r) VALUES(?1, random())");  // a duplicate id: fails everywhere
    s->add_params()->set_integer(2);
  } else {
    s->set_sql("INSERT INTO t(id, r) VALUES(?1, random())");
    s->add_params()->set_integer(static_cast<int64_t>(seq));
  }
  return e;
}

inline proto::Replicate Range(uint64_t first, uint64_t last) {
  proto::Replicate r;
  for (uint64_t s = first; s <= last; ++s) *r.add_entries() = MakeEntry(s);
  r.set_head_seq(last);
  return r;
}

// Applies entries 1..n to a fresh file with the core library alone: the reference state.
inline replication::ReplicaState ApplyDirectly(const std::string& path, uint64_t n) {
  auto ex = replication::OpenSqliteExecutor(path, {});
  EXPECT_TRUE(ex.ok());
  auto applier = replication::Applier::Create(std::move(ex).value());
  EXPECT_TRUE(applier.ok());
  std::vector<replication::Entry> entries;
  for (uint64_t s = 1; s <= n; ++s) entries.push_back(*EntryFromProto(MakeEntry(s)));
  EXPECT_TRUE((*applier)->Apply(entries).ok());
  return (*applier)->state();
}

// A replica without hooks, to try a second one on a file.
inline Result<std::unique_ptr<Replica>> OpenPlain(const std::string& path) {
  ReplicaOptions o;
  o.path = path;
  return Replica::Open(o, {});
}

class ReplicaTest : public ::testing::Test {
 protected:
  struct Ack {
    uint64_t session;
    proto::ReplicaAck ack;
  };

  std::unique_ptr<Replica> OpenReplica(const std::string& path, std::string token = "") {
    ReplicaOptions o;
    o.path = path;
    o.max_batch = 1000;
    o.snapshot_token = std::move(token);
    o.snapshot_timeout = snapshot_timeout_;
    o.apply_interval = apply_interval_;
    ReplicaHooks h;
    h.on_ack = [this](uint64_t session, proto::ReplicaAck ack) {
      std::lock_guard lock(mu_);
      acks_.push_back({session, std::move(ack)});
      cv_.notify_all();
    };
    h.close_readers = [this] {
      std::lock_guard lock(mu_);
      events_.push_back("close");
    };
    h.reopen_readers = [this] {
      std::lock_guard lock(mu_);
      events_.push_back("reopen");
    };
    auto r = Replica::Open(o, std::move(h));
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return std::move(r).value();
  }

  void StartAndWait(Replica& r) {
    r.Start([this] {
      std::lock_guard lock(mu_);
      ready_ = true;
      cv_.notify_all();
    });
    std::unique_lock lock(mu_);
    ASSERT_TRUE(cv_.wait_for(lock, std::chrono::seconds(20), [this] { return ready_; }));
  }

  // Waits until an ack reports `seq` or an error; returns all acks so far.
  std::vector<Ack> WaitForAck(uint64_t seq, bool error = false) {
    std::unique_lock lock(mu_);
    bool ok = cv_.wait_for(lock, std::chrono::seconds(20), [&] {
      for (const auto& a : acks_) {
        if (error ? !a.ack.error().empty() : a.ack.applied_seq() >= seq) return true;
      }
      return false;
    });
    EXPECT_TRUE(ok) << "no ack for seq " << seq;
    return acks_;
  }

  test_support::TempDir dir_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Ack> acks_;
  std::vector<std::string> events_;
  bool ready_ = false;
  Duration snapshot_timeout_ = std::chrono::seconds(5);  // set before OpenReplica
  Duration apply_interval_{0};                           // set before OpenReplica
};

// Serves GET /v1/snapshot of `path` on a thread, as a peer's HTTP port does.
class SnapshotPeer {
 public:
  SnapshotPeer(const std::string& path, std::string token)
      : snapshots_(path, std::move(token), std::chrono::seconds(5)),
        server_(io_, asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0),
                [this](const net::HttpRequest& r) { return snapshots_.Handle(r); }),
        guard_(io_.get_executor()) {
    snapshots_.Start();
    EXPECT_TRUE(server_.Start().ok());
    thread_ = std::thread([this] { io_.run(); });
  }
  ~SnapshotPeer() {
    asio::post(io_, [this] { server_.Stop(); });
    guard_.reset();
    io_.stop();
    thread_.join();
    snapshots_.Stop();
  }
  uint16_t port() const { return server_.local_port(); }
  // The context that serves HTTP: a test can run work on it and see that it is not held up.
  asio::io_context& io() { return io_; }
  const SnapshotServer& snapshots() const { return snapshots_; }

 private:
  SnapshotServer snapshots_;
  asio::io_context io_;
  net::HttpServer server_;
  asio::executor_work_guard<asio::io_context::executor_type> guard_;
  std::thread thread_;
};

}  // namespace vsc::realserver

// FailoverLoad: what runs through the VIP while a director fails over (issue 11): one lookup
// client in a closed loop and four writers, each on a thread of its own in the client's
// namespace. Writer w inserts rows (key "w<w>-<n>", w, n) into failover_log, one a write, each
// with its key as the idempotency key. An answer that is not ok (refused while no director
// sequences, "outcome unknown", a broken connection, a timeout) is retried with the same key on
// a fresh connection until it is, so each row is applied once and its writer knows when: after
// Stop, the keys acknowledged are exactly the rows a replica holds.
#pragma once

#include <atomic>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "client/sql_client.h"
#include "netns/netns_cluster.h"
#include "store/database.h"

namespace vsc::netns {

inline constexpr int kFailoverWriters = 4;
inline constexpr const char* kFailoverTable =
    "CREATE TABLE failover_log(key TEXT PRIMARY KEY, writer INTEGER, n INTEGER)";

class FailoverLoad {
 public:
  struct Writer {
    std::vector<std::string> acked;          // in the order acknowledged
    std::map<std::string, uint64_t> errors;  // retried answers, by their text's first words
    uint64_t duplicates = 0;                 // retries answered as already applied
  };

  FailoverLoad(const NetnsTopology& topo, const proto::ClusterKey& key, std::string vip,
               uint16_t lookup_port, uint16_t write_port)
      : topo_(topo),
        key_(key),
        vip_(std::move(vip)),
        lookup_port_(lookup_port),
        write_port_(write_port) {}
  ~FailoverLoad() { Stop(); }

  void Start() {
    threads_.emplace_back([this] { (void)topo_.RunIn("client", [this] { Lookups(); }); });
    for (int w = 0; w < kFailoverWriters; ++w) {
      threads_.emplace_back([this, w] { (void)topo_.RunIn("client", [this, w] { Writes(w); }); });
    }
  }
  // Each writer ends once its write in progress is acknowledged (or after 20 s of retries).
  void Stop() {
    stop_ = true;
    for (auto& t : threads_) t.join();
    threads_.clear();
  }

  const Writer& writer(int w) const { return writers_[w]; }
  uint64_t lookups_answered() const { return answered_; }
  uint64_t lookups_unanswered() const { return unanswered_; }
  // The answers that did not match the database (each with its source); empty in a good run.
  std::vector<std::string> wrong_answers() const {
    std::lock_guard lock(wrong_mu_);
    return wrong_;
  }
  // The longest time between two answered lookups.
  Duration longest_lookup_gap() const { return longest_gap_; }
  std::set<std::string> AckedKeys() const {
    std::set<std::string> out;
    for (const Writer& w : writers_) out.insert(w.acked.begin(), w.acked.end());
    return out;
  }

 private:
  void Lookups() {
    const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    Random random(7);
    RealClock clock;
    TimePoint last = clock.Now();
    for (uint64_t id = 1; !stop_; ++id) {
      const Answer a =
          LookupVia(fd, vip_, lookup_port_, id, random, std::chrono::milliseconds(100));
      if (!a.answered) {
        ++unanswered_;
        continue;
      }
      if (!a.problem.empty()) {  // answered, but not what the database holds: never allowed
        std::lock_guard lock(wrong_mu_);
        wrong_.push_back(a.problem + " (from " + a.from + ")");
        continue;
      }
      ++answered_;
      const TimePoint now = clock.Now();
      longest_gap_ = std::max(longest_gap_, now - last);
      last = now;
    }
    ::close(fd);
  }

  void Writes(int w) {
    Writer& me = writers_[w];
    std::optional<client::WriteClient> c;
    RealClock clock;
    for (int n = 0; !stop_; ++n) {
      const std::string key = "w" + std::to_string(w) + "-" + std::to_string(n);
      const TimePoint give_up = clock.Now() + std::chrono::seconds(20);
      for (;;) {
        if (!c) {
          auto made =
              client::WriteClient::Connect(vip_, write_port_, key_, std::chrono::seconds(1));
          if (made.ok()) c.emplace(std::move(*made));
        }
        Result<proto::WriteResponse> r = Unavailable("no connection to the VIP");
        if (c) {
          r = c->Execute(
              {client::MakeStatement("INSERT INTO failover_log(key, writer, n) VALUES(?1, ?2, ?3)",
                                     {client::SqlText(key), client::SqlInt(w), client::SqlInt(n)})},
              key);
        }
        if (r.ok() && r->ok()) {
          me.acked.push_back(key);
          me.duplicates += r->duplicate();
          break;
        }
        const std::string why = r.ok() ? r->error() : r.status().ToString();
        ++me.errors[why.substr(0, why.find_first_of(":(", 0))];
        c.reset();  // a fresh connection: the VIP may lead elsewhere now
        if (clock.Now() > give_up) return;
        ::poll(nullptr, 0, 50);
      }
    }
  }

  const NetnsTopology& topo_;
  const proto::ClusterKey key_;
  const std::string vip_;
  const uint16_t lookup_port_, write_port_;
  std::atomic<bool> stop_{false};
  std::vector<std::thread> threads_;
  Writer writers_[kFailoverWriters];
  std::atomic<uint64_t> answered_{0}, unanswered_{0};
  mutable std::mutex wrong_mu_;
  std::vector<std::string> wrong_;
  Duration longest_gap_{0};
};

// The keys of failover_log in the replica database at `path` (read-only, beside the server that
// writes it), or the error.
inline Result<std::set<std::string>> KeysInReplica(const std::string& path) {
  store::OpenOptions o;
  o.read_only = true;
  VSC_ASSIGN_OR_RETURN(store::Database db, store::Database::Open(path, o));
  VSC_ASSIGN_OR_RETURN(store::Statement q, db.Prepare("SELECT key FROM failover_log"));
  std::set<std::string> keys;
  for (;;) {
    VSC_ASSIGN_OR_RETURN(bool row, q.Step());
    if (!row) break;
    keys.insert(std::string(q.ColumnText(0)));
  }
  return keys;
}

}  // namespace vsc::netns

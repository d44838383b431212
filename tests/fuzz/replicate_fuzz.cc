// Fuzzes Replicate on the real server: the entries a director streams (proto::Replicate, as the
// agent hands it to Replica::Submit) applied by the replica thread to a real SQLite replica
// (entry decoding, the applier's ordering and batching, the replica VFS's deterministic clock
// and random functions), and the ReplicaAck it answers with. Record ops (fuzz_records.h): the
// session is op & 1 (acks of another session's batch go apart); bytes: proto::Replicate. Each
// batch is submitted alone and its ack awaited, so the run is deterministic.
// Invariants: each ack's outcomes are the next seqs after the previous applied_seq, its
// applied_seq is the last of them and what the replica reports, its digest has 32 bytes; and
// determinism, the core promise of statement replication: a second fresh replica fed the same
// batches answers byte for byte the same acks.
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "fuzz_records.h"
#include "fuzz_temp.h"
#include "realserver/replica.h"

namespace {

using vsc::realserver::Replica;

class Runner {
 public:
  explicit Runner(const std::string& path) {
    vsc::fuzz::RemoveDatabase(path);
    vsc::realserver::ReplicaOptions o;
    o.path = path;
    vsc::realserver::ReplicaHooks h;
    h.on_ack = [this](uint64_t, vsc::proto::ReplicaAck ack) {
      std::lock_guard lock(mu_);
      acks_.push_back(std::move(ack));
      cv_.notify_all();
    };
    auto r = Replica::Open(o, std::move(h));
    if (!r.ok()) vsc::fuzz::Fail(r.status().ToString());
    replica_ = std::move(r).value();
    replica_->Start([this] {
      std::lock_guard lock(mu_);
      ready_ = true;
      cv_.notify_all();
    });
    Wait([this] { return ready_; });
  }

  // Submits one batch and returns its ack.
  vsc::proto::ReplicaAck Apply(uint64_t session, const vsc::proto::Replicate& batch) {
    const size_t before = Count();
    replica_->Submit(session, batch);
    Wait([&] { return acks_.size() > before; });
    std::lock_guard lock(mu_);
    return acks_.back();
  }

  uint64_t applied_seq() const { return replica_->applied_seq(); }

 private:
  size_t Count() {
    std::lock_guard lock(mu_);
    return acks_.size();
  }
  template <typename Pred>
  void Wait(Pred done) {
    std::unique_lock lock(mu_);
    if (!cv_.wait_for(lock, std::chrono::seconds(60), done)) {
      vsc::fuzz::Fail("the replica thread did not answer within 60 s");
    }
  }

  std::mutex mu_;
  std::condition_variable cv_;
  bool ready_ = false;
  std::vector<vsc::proto::ReplicaAck> acks_;
  std::unique_ptr<Replica> replica_;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<std::pair<uint64_t, vsc::proto::Replicate>> batches;
  vsc::fuzz::RecordReader in(data, size);
  vsc::fuzz::Record rec;
  while (batches.size() < 8 && in.Next(rec)) {
    vsc::proto::Replicate r;
    if (!vsc::fuzz::ParseMessage(rec.bytes, r)) continue;
    batches.emplace_back(rec.op & 1, std::move(r));
  }
  if (batches.empty()) return 0;

  Runner a(vsc::fuzz::TempDir() + "/a.db");
  Runner b(vsc::fuzz::TempDir() + "/b.db");
  uint64_t applied = 0;
  for (const auto& [session, batch] : batches) {
    const vsc::proto::ReplicaAck ack = a.Apply(session, batch);
    if (ack.digest().size() != 32) std::abort();
    uint64_t expect = applied;
    for (const auto& o : ack.outcomes()) {
      if (o.seq() != ++expect) std::abort();  // outcomes follow applied_seq without holes
    }
    if (ack.applied_seq() != expect || a.applied_seq() != expect) std::abort();
    applied = expect;
    if (b.Apply(session, batch).SerializeAsString() != ack.SerializeAsString()) {
      std::abort();  // two replicas applied the same stream differently
    }
  }
  return 0;
}

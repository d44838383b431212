#include "director/verify_tracker.h"

namespace vsc::director {

void VerifyTracker::Start(uint64_t seq, TimePoint now, std::set<std::string> expected,
                          std::map<std::string, std::string> skipped) {
  Run& run = runs_[seq];
  run.started = now;
  run.expected = std::move(expected);
  run.skipped = std::move(skipped);
  last_seq_ = seq;
  while (runs_.size() > kept_) runs_.erase(runs_.begin());
}

void VerifyTracker::OnChecksum(uint64_t seq, const std::string& id, const std::string& checksum) {
  if (auto it = runs_.find(seq); it != runs_.end()) it->second.checksums[id] = checksum;
}

void VerifyTracker::OnLost(const std::string& id) {
  for (auto& [seq, run] : runs_) {
    if (run.expected.contains(id) && !run.checksums.contains(id)) run.lost.insert(id);
  }
}

void VerifyTracker::OnDecided(uint64_t seq, const std::string& checksum) {
  if (auto it = runs_.find(seq); it != runs_.end()) it->second.agreed = checksum;
}

void VerifyTracker::Tick(TimePoint now) {
  for (auto& [seq, run] : runs_) {
    if (!run.timed_out && now - run.started >= timeout_) run.timed_out = true;
  }
}

std::optional<VerifyReport> VerifyTracker::Report(uint64_t seq, TimePoint now) const {
  auto it = runs_.find(seq);
  if (it == runs_.end()) return std::nullopt;
  const Run& v = it->second;
  VerifyReport rep;
  rep.seq = seq;
  rep.elapsed_ms = ToMillis(now - v.started);
  rep.expected = v.agreed;
  if (rep.expected.empty()) {
    // Not decided yet: the checksum most replicas reported so far (ties: the smallest).
    std::map<std::string, int> votes;
    for (const auto& [id, sum] : v.checksums) votes[sum]++;
    int best = 0;
    for (const auto& [sum, n] : votes) {
      if (n > best) {
        best = n;
        rep.expected = sum;
      }
    }
  }
  bool all_ok = true;
  bool pending = false;
  for (const std::string& id : v.expected) {
    VerifyReplica r;
    r.id = id;
    if (auto c = v.checksums.find(id); c != v.checksums.end()) {
      r.checksum = c->second;
      r.status = c->second == rep.expected ? "OK" : "MISMATCH";
    } else if (v.lost.contains(id)) {
      r.status = "LOST";
    } else if (v.timed_out) {
      r.status = "TIMEOUT";
    } else {
      r.status = "PENDING";
      pending = true;
    }
    if (r.status != "OK") all_ok = false;
    rep.replicas.push_back(std::move(r));
  }
  for (const auto& [id, state] : v.skipped) {
    rep.replicas.push_back({id, "", "SKIPPED (" + state + ")"});
    all_ok = false;
  }
  rep.complete = !pending;
  rep.ok = rep.complete && all_ok && !v.expected.empty();
  return rep;
}

}  // namespace vsc::director

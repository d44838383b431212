#include "director/in_sync_record.h"

#include <algorithm>
#include <nlohmann/json.hpp>

namespace vsc::director {

using nlohmann::json;

std::string EncodeInSyncRecord(const InSyncRecord& record) {
  json members = json::array();
  for (const std::string& id : record.members) members.push_back(id);
  return json{{"epoch", record.epoch}, {"seq", record.seq}, {"in_sync", members}}.dump();
}

Result<InSyncRecord> ParseInSyncRecord(std::string_view value) {
  const std::string what = "the in-sync record in etcd";
  json j = json::parse(value, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return DataLoss(what + " is not a JSON object");
  InSyncRecord r;
  for (auto [field, out] : {std::pair{"epoch", &r.epoch}, std::pair{"seq", &r.seq}}) {
    auto it = j.find(field);
    if (it == j.end() || !it->is_number_unsigned()) {
      return DataLoss(what + " has no unsigned integer \"" + field + "\"");
    }
    *out = it->get<uint64_t>();
  }
  auto members = j.find("in_sync");
  if (members == j.end() || !members->is_array()) {
    return DataLoss(what + " has no \"in_sync\" array");
  }
  for (const json& m : *members) {
    if (!m.is_string() || m.get_ref<const std::string&>().empty()) {
      return DataLoss(what + " holds an \"in_sync\" member that is not a server id");
    }
    r.members.insert(m.get<std::string>());
  }
  if (r.members.empty()) return DataLoss(what + " names no replica");
  return r;
}

std::string JoinReplicaSet(const ReplicaSet& set) {
  std::string out;
  for (const std::string& id : set) {
    if (!out.empty()) out += ", ";
    out += id;
  }
  return out;
}

std::optional<ReplicaSet> PromotionWaitsFor(const std::optional<InSyncRecord>& last,
                                            const ReplicaSet& registered) {
  if (!last) return std::nullopt;
  for (const std::string& id : last->members) {
    if (registered.count(id) != 0) return std::nullopt;
  }
  return last->members;
}

void InSyncLedger::Reset(uint64_t epoch, std::optional<InSyncRecord> previous) {
  epoch_ = epoch;
  recorded_ = std::move(previous);
  requested_.reset();
}

bool InSyncLedger::Covered(const ReplicaSet& in_sync) const {
  return own_recorded() && std::includes(in_sync.begin(), in_sync.end(), recorded_->members.begin(),
                                         recorded_->members.end());
}

std::optional<InSyncRecord> InSyncLedger::Want(const ReplicaSet& in_sync, uint64_t seq) {
  if (in_sync.empty() || (requested_ && *requested_ == in_sync)) return std::nullopt;
  requested_ = in_sync;
  return InSyncRecord{epoch_, seq, in_sync};
}

void InSyncLedger::OnRecorded(const InSyncRecord& record) {
  if (record.epoch == epoch_) recorded_ = record;
}

void InSyncLedger::OnRecordFailed(uint64_t epoch) {
  if (epoch == epoch_) requested_.reset();
}

}  // namespace vsc::director

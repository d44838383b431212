#include "director/service_table_sync.h"

#include "director/service_store.h"
#include "vservice/service_toml.h"

namespace vsc::director {

std::string ServiceTableKey(std::string_view cluster_name) {
  return "/vscluster/" + std::string(cluster_name) + "/services";
}

std::string EncodeServiceTable(const vservice::VirtualServiceTable& table,
                               const std::set<vservice::ServiceKey>& builtin) {
  return vservice::SaveServicesToml(WithoutServices(table, builtin));
}

Result<vservice::VirtualServiceTable> DecodeServiceTable(const etcd::KeyValue& kv,
                                                         vservice::TableLimits limits) {
  const std::string origin =
      "etcd key " + kv.key + " (revision " + std::to_string(kv.mod_revision) + ")";
  return vservice::LoadServicesToml(kv.value, origin, limits);
}

vservice::VirtualServiceTable WithBuiltin(vservice::VirtualServiceTable shared,
                                          const vservice::VirtualServiceTable& running,
                                          const std::set<vservice::ServiceKey>& builtin) {
  vservice::VirtualServiceTable out = WithoutServices(shared, builtin);
  for (const vservice::ServiceKey& key : builtin) {
    const vservice::VirtualService* vs = running.Find(key);
    if (vs == nullptr) continue;
    // The running entry was valid in a table of the same limits; these cannot fail.
    (void)out.AddService(key, vs->config);
    for (const auto& [dest, config] : vs->dests) (void)out.AddDest(key, dest, config);
  }
  return out;
}

Status ServiceTableWritable(const LeaseView& lease, TimePoint now) {
  if (lease.held && now < lease.valid_until) return Status::Ok();
  if (!lease.holder.empty()) {
    return FailedPrecondition(
        "this director is a standby; change the service table on the active director (" +
        lease.holder + ")");
  }
  const std::string why = lease.refusal.empty() ? "no lease yet" : lease.refusal;
  return Unavailable("this director does not hold the sequencer lease (" + why +
                     "), and only its holder changes the service table kept in etcd; try again "
                     "once a director holds it");
}

ServiceTableSync::Read ServiceTableSync::OnRead(const std::optional<etcd::KeyValue>& kv,
                                                vservice::TableLimits limits) {
  Read out;
  if (!kv.has_value()) {
    out.kind = Read::Kind::kAbsent;
    return out;
  }
  out.revision = kv->mod_revision;
  if (kv->mod_revision <= revision_) return out;
  auto table = DecodeServiceTable(*kv, limits);
  if (!table.ok()) {
    revision_ = kv->mod_revision;
    out.kind = Read::Kind::kMalformed;
    out.error = table.status();
    return out;
  }
  out.kind = Read::Kind::kApply;
  out.table = std::move(table).value();
  return out;
}

void ServiceTableSync::OnApplied(int64_t revision, std::string value) {
  if (revision > revision_) revision_ = revision;
  value_ = std::move(value);
}

void ServiceTableSync::OnSeen(int64_t revision) {
  if (revision > revision_) revision_ = revision;
}

}  // namespace vsc::director

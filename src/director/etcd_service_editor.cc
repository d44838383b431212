#include "director/etcd_service_editor.h"

#include <spdlog/spdlog.h>

namespace vsc::director {

EtcdServiceEditor::EtcdServiceEditor(ServiceEditor& inner, EtcdClient client, std::string key,
                                     std::set<vservice::ServiceKey> builtin, const Clock& clock)
    : ForwardingServiceEditor(inner),
      client_(std::move(client)),
      key_(std::move(key)),
      builtin_(std::move(builtin)),
      clock_(clock) {}

void EtcdServiceEditor::StartedFrom(int64_t revision, bool applied) {
  if (applied) {
    sync_.OnApplied(revision, EncodeServiceTable(inner_.table(), builtin_));
  } else {
    sync_.OnSeen(revision);
  }
}

void EtcdServiceEditor::Refuse(uint64_t& counter, const Status& why) {
  ++counter;
  spdlog::warn("service table change refused: {}", why.message());
}

Result<etcd::KeyValue> EtcdServiceEditor::Write(const std::string& value) {
  if (Status s = ServiceTableWritable(lease_, clock_.Now()); !s.ok()) {
    Refuse(counts_.standby, s);
    return s;
  }
  auto txn = client_.PutIfModRevision(key_, value, sync_.revision());
  if (!txn.ok()) {
    Status s = Unavailable("the service table is kept in etcd, which did not take the change (" +
                           txn.status().message() + "); nothing changed");
    Refuse(counts_.unavailable, s);
    return s;
  }
  if (!txn->succeeded || !txn->kv.has_value()) {
    const int64_t now_at = txn->kv ? txn->kv->mod_revision : 0;
    Status s = FailedPrecondition(
        "the service table in etcd changed since this director applied it (revision " +
        std::to_string(now_at) + ", applied " + std::to_string(sync_.revision()) +
        "); nothing changed: the new table is applied here within moments, then try again");
    Refuse(counts_.conflict, s);
    return s;
  }
  return *txn->kv;
}

Result<std::vector<vservice::Change>> EtcdServiceEditor::Commit(
    vservice::VirtualServiceTable next) {
  std::string value = EncodeServiceTable(next, builtin_);
  if (sync_.value() == value) return inner_.Commit(std::move(next));  // built-in entries only
  VSC_ASSIGN_OR_RETURN(etcd::KeyValue written, Write(value));
  auto changes = inner_.Commit(std::move(next));
  if (!changes.ok()) {
    // etcd holds a table that does not run here: give it back the one that does.
    const std::optional<std::string> previous = sync_.value();
    sync_.OnSeen(written.mod_revision);
    if (previous.has_value()) {
      if (auto back = Write(*previous); back.ok()) {
        sync_.OnApplied(back->mod_revision, *previous);
      } else {
        spdlog::error(
            "service table: etcd keeps revision {}, which failed here ({}); putting "
            "the previous table back failed: {}",
            written.mod_revision, changes.status().message(), back.status().message());
      }
    }
    return changes;
  }
  sync_.OnApplied(written.mod_revision, std::move(value));
  ++counts_.written;
  spdlog::info("service table: {} change(s) written to etcd {} at revision {}", changes->size(),
               key_, written.mod_revision);
  return changes;
}

void EtcdServiceEditor::Apply(int64_t revision, vservice::VirtualServiceTable shared) {
  auto changes = inner_.Commit(WithBuiltin(std::move(shared), inner_.table(), builtin_));
  if (!changes.ok()) {
    sync_.OnSeen(revision);
    ++counts_.apply_failed;
    spdlog::error(
        "service table: etcd {} revision {} does not apply here ({}); the running "
        "table stays",
        key_, revision, changes.status().message());
    return;
  }
  sync_.OnApplied(revision, EncodeServiceTable(inner_.table(), builtin_));
  ++counts_.from_etcd;
  spdlog::info("service table: etcd {} revision {} applied, {} change(s)", key_, revision,
               changes->size());
}

void EtcdServiceEditor::Seed() {
  if (!ServiceTableWritable(lease_, clock_.Now()).ok()) return;
  std::string value = EncodeServiceTable(inner_.table(), builtin_);
  auto txn = client_.PutIfModRevision(key_, value, 0);
  if (!txn.ok() || !txn->succeeded || !txn->kv) return;  // the next read tells what is there
  sync_.OnApplied(txn->kv->mod_revision, std::move(value));
  spdlog::info("service table: etcd had no {}; wrote this director's table at revision {}", key_,
               txn->kv->mod_revision);
}

void EtcdServiceEditor::OnRead(const std::optional<etcd::KeyValue>& kv) {
  using K = ServiceTableSync::Read::Kind;
  ServiceTableSync::Read read = sync_.OnRead(kv, inner_.table().limits());
  switch (read.kind) {
    case K::kCurrent:
      break;
    case K::kAbsent:
      Seed();
      break;
    case K::kMalformed:
      ++counts_.malformed;
      spdlog::error("service table: {}; ignored, the running table stays", read.error.message());
      break;
    case K::kApply:
      Apply(read.revision, std::move(*read.table));
      break;
  }
}

std::string EtcdServiceEditor::RenderMetrics() const {
  std::string o =
      "# HELP vsc_director_service_table_revision The etcd mod_revision of the service table "
      "this director last saw.\n# TYPE vsc_director_service_table_revision gauge\n"
      "vsc_director_service_table_revision " +
      std::to_string(sync_.revision()) +
      "\n# HELP vsc_director_service_table_updates_total Service tables applied, by source.\n"
      "# TYPE vsc_director_service_table_updates_total counter\n"
      "vsc_director_service_table_updates_total{source=\"etcd\"} " +
      std::to_string(counts_.from_etcd) +
      "\nvsc_director_service_table_updates_total{source=\"local\"} " +
      std::to_string(counts_.written) +
      "\n# HELP vsc_director_service_table_refusals_total Service table changes refused.\n"
      "# TYPE vsc_director_service_table_refusals_total counter\n";
  auto line = [&o](const char* name, const char* reason, uint64_t n) {
    o += std::string("vsc_director_service_table_") + name + "_total{reason=\"" + reason + "\"} " +
         std::to_string(n) + "\n";
  };
  line("refusals", "standby", counts_.standby);
  line("refusals", "etcd_unavailable", counts_.unavailable);
  line("refusals", "conflict", counts_.conflict);
  o += "# HELP vsc_director_service_table_rejected_total Tables read from etcd and not applied.\n"
       "# TYPE vsc_director_service_table_rejected_total counter\n";
  line("rejected", "malformed", counts_.malformed);
  line("rejected", "apply_failed", counts_.apply_failed);
  return o;
}

}  // namespace vsc::director

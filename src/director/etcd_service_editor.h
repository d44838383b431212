// EtcdServiceEditor: the director's service table kept in etcd (issue 11;
// service_table_sync.h has the key and its value). It wraps the saving editor
// (service_store.h), so services_file stays a local copy of whatever runs.
//
// - Commit (vsc adm, the admin API, a SIGHUP reload): when the change alters what etcd holds,
//   only the lease holder may make it (a standby answers "this director is a standby; change
//   the service table on the active director (<holder>)"). The holder writes the next table
//   with a transaction that succeeds only while the key's mod_revision is the newest this
//   director has seen, and commits locally only after etcd said yes; etcd unreachable, or a
//   newer table in etcd than the one applied here, refuses the change and nothing changed. If
//   the local commit then fails (a port in use), etcd gets the previous table back. A change
//   to the built-in entries alone (not in etcd) is committed here at once.
//   The transaction blocks the control thread for at most etcd_timeout_ms per endpoint: the
//   operator's answer has to say whether etcd took the change.
// - OnRead (ServiceTableWatch's reads, posted to the control thread): a newer revision is
//   committed (only the difference is applied, built-in entries kept); a value that does not
//   load, or a table that does not apply here, is logged and counted and the running table
//   stays. A missing key is written, create-if-absent, with the running table by the holder.
//
// Control thread only, like the editor it wraps; the clock and inner editor outlive it.
#pragma once

#include <cstdint>
#include <set>
#include <string>

#include "director/etcd_client.h"
#include "director/service_editor.h"
#include "director/service_table_sync.h"

namespace vsc::director {

class EtcdServiceEditor : public ForwardingServiceEditor {
 public:
  EtcdServiceEditor(ServiceEditor& inner, EtcdClient client, std::string key,
                    std::set<vservice::ServiceKey> builtin, const Clock& clock);

  // The start-up table came from etcd at `revision` (or, when it did not load, was seen).
  void StartedFrom(int64_t revision, bool applied);

  Result<std::vector<vservice::Change>> Commit(vservice::VirtualServiceTable next) override;

  void SetLease(const LeaseView& lease) { lease_ = lease; }
  void OnRead(const std::optional<etcd::KeyValue>& kv);
  // vsc_director_service_table_* (revision, updates, refusals, rejected reads).
  std::string RenderMetrics() const;
  int64_t revision() const { return sync_.revision(); }

 private:
  // Writes `value` over the revision last seen: the key after the transaction, or the refusal.
  Result<etcd::KeyValue> Write(const std::string& value);
  void Apply(int64_t revision, vservice::VirtualServiceTable shared);
  void Seed();
  void Refuse(uint64_t& counter, const Status& why);

  EtcdClient client_;
  std::string key_;
  std::set<vservice::ServiceKey> builtin_;
  const Clock& clock_;
  LeaseView lease_;
  ServiceTableSync sync_;
  struct Counts {
    uint64_t from_etcd = 0;     // watched tables applied
    uint64_t written = 0;       // changes this director wrote to etcd
    uint64_t standby = 0;       // refusals: not the lease holder
    uint64_t unavailable = 0;   // refusals: etcd did not answer
    uint64_t conflict = 0;      // refusals: etcd held a newer table
    uint64_t malformed = 0;     // reads whose value did not load
    uint64_t apply_failed = 0;  // reads that loaded but did not apply here
  } counts_;
};

}  // namespace vsc::director

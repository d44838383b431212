// ServiceTableSync: the pure part of the service table in etcd (issue 11). With etcd_endpoints
// set, the cluster's table of virtual services is one key, /vscluster/<cluster_name>/services,
// whose value is the whole table in services_file's TOML (service_toml.h: checks, weights and
// agent ids included) without the director's built-in lookup entries, which every director's
// [director] keys declare. Every director reads the key (ServiceTableWatch) and applies a newer
// revision; the lease holder writes it (EtcdServiceEditor) with a transaction that succeeds
// only while the key's mod_revision is the one this director last saw, so no change is lost.
//
// This file holds what needs no I/O: the key, the value's codec, the merge with the built-in
// entries, whether a read is to be applied, and who may write. No clock reads, no threads.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "common/clock.h"
#include "common/status.h"
#include "director/etcd_codec.h"
#include "director/sequencer_lease.h"
#include "vservice/virtual_service_table.h"

namespace vsc::director {

// "/vscluster/<cluster_name>/services".
std::string ServiceTableKey(std::string_view cluster_name);

// The key's value for `table`: its TOML, the `builtin` services left out.
std::string EncodeServiceTable(const vservice::VirtualServiceTable& table,
                               const std::set<vservice::ServiceKey>& builtin);
// The table a value holds; InvalidArgument naming the key and revision when it does not load.
Result<vservice::VirtualServiceTable> DecodeServiceTable(const etcd::KeyValue& kv,
                                                         vservice::TableLimits limits);

// `shared` (etcd's table) with the `builtin` services of `running` laid over it: the table a
// director runs. A built-in key in `shared` (another director's lookup port) gives way.
vservice::VirtualServiceTable WithBuiltin(vservice::VirtualServiceTable shared,
                                          const vservice::VirtualServiceTable& running,
                                          const std::set<vservice::ServiceKey>& builtin);

// Whether this director may write the key now: only while it holds the sequencer lease (so
// one director writes at a time and the standby's copy is only ever etcd's). The refusal names
// the holder when etcd named one.
Status ServiceTableWritable(const LeaseView& lease, TimePoint now);

// What a director knows of the key: the newest revision it has seen (the compare base of its
// next write) and the value it runs. Control thread only.
class ServiceTableSync {
 public:
  struct Read {
    enum class Kind { kCurrent, kAbsent, kApply, kMalformed };
    Kind kind = Kind::kCurrent;
    int64_t revision = 0;
    std::optional<vservice::VirtualServiceTable> table;  // kApply
    Status error;                                        // kMalformed
  };
  // A read of the key (nullopt: absent). kApply when its revision is newer than any seen;
  // kMalformed (once per revision, which then counts as seen) when it does not decode;
  // kCurrent when it is not newer; kAbsent when there is no key.
  Read OnRead(const std::optional<etcd::KeyValue>& kv, vservice::TableLimits limits);
  // `value` at `revision` now runs here (a read applied, or this director's write).
  void OnApplied(int64_t revision, std::string value);
  // `revision` was seen but could not be applied: the next write still compares against it.
  void OnSeen(int64_t revision);

  int64_t revision() const { return revision_; }
  // The value that runs here, nullopt when none came from or went to etcd yet.
  const std::optional<std::string>& value() const { return value_; }

 private:
  int64_t revision_ = 0;
  std::optional<std::string> value_;
};

}  // namespace vsc::director

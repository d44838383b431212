// EtcdClient: a blocking client of etcd's v3 JSON gateway (etcd_codec.h) over HttpRequestSync,
// for the sequencer lease (sequencer_lease.h) and the service table (etcd_service_editor.h).
// Each call is one HTTP/1.1 POST, bounded by `timeout`, to the endpoint that answered last; a
// connection failure, a timeout or an
// Unavailable answer (no leader, no quorum) moves on to the next endpoint, each tried once per
// call. When none answers, the call is Unavailable and its message names every endpoint's error.
//
// Thread: blocking; use it from a thread of its own (LeaseKeeper, ServiceTableWatch). The one
// exception is the service table's commit (etcd_service_editor.h), an operator's change that
// must know etcd's answer before it answers. One caller at a time.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "director/etcd_codec.h"

namespace vsc::director {

struct EtcdEndpoint {
  std::string host;
  uint16_t port = 0;
  std::string Text() const { return host + ":" + std::to_string(port); }
};

// "http://127.0.0.1:2379", "127.0.0.1:2379" or "[::1]:2379". https is refused (this client
// speaks plain HTTP; keep etcd's client port on loopback or a private network).
Result<EtcdEndpoint> ParseEtcdEndpoint(std::string_view text);

class EtcdClient {
 public:
  EtcdClient(std::vector<EtcdEndpoint> endpoints, Duration timeout);

  Result<etcd::Lease> Grant(int64_t ttl_s);
  // Remaining TTL in seconds; NotFound when the lease is gone (expired or revoked).
  Result<int64_t> KeepAlive(int64_t lease_id);
  // Ok also when the lease is gone already.
  Status Revoke(int64_t lease_id);
  Result<std::optional<etcd::KeyValue>> Get(std::string_view key);
  // Creates `key` = `value` under the lease unless the key exists; either way the key as it
  // stands after the transaction.
  Result<etcd::TxnResult> CreateWithLease(std::string_view key, std::string_view value,
                                          int64_t lease_id);
  // Puts `key` = `value` if the key's mod_revision is `mod_revision` (0: the key is absent);
  // either way the key as it stands after the transaction.
  Result<etcd::TxnResult> PutIfModRevision(std::string_view key, std::string_view value,
                                           int64_t mod_revision);
  // Puts `key` = `value` if `guard` exists and was created at `create_revision`; either way
  // `key` as it stands after the transaction.
  Result<etcd::TxnResult> PutIfCreatedAt(std::string_view guard, int64_t create_revision,
                                         std::string_view key, std::string_view value);
  // The endpoint that answered last (for a watch, etcd_watch.h); nullptr when none is configured.
  const EtcdEndpoint* preferred() const {
    return endpoints_.empty() ? nullptr : &endpoints_[preferred_ % endpoints_.size()];
  }

 private:
  struct Answer {
    int status = 0;
    std::string body;
  };
  // POSTs to the endpoints in turn until one answers with anything but Unavailable.
  template <typename T, typename Parse>
  Result<T> Call(std::string_view path, const std::string& body, Parse parse);

  std::vector<EtcdEndpoint> endpoints_;
  Duration timeout_;
  size_t preferred_ = 0;  // the endpoint that answered last
};

}  // namespace vsc::director

// The JSON bodies of etcd's v3 gRPC gateway (etcd 3.4: POST /v3/<service>/<method>, keys and
// values in base64, 64-bit integers as JSON strings) and the parsing of its answers. Pure: no
// I/O; EtcdClient (etcd_client.h) carries them. Only the calls the sequencer lease needs:
// lease grant, keepalive and revoke, a range read, the create-if-absent transaction, the
// service table's put-if-unchanged transaction (etcd_service_editor.h) and the in-sync record's
// put-while-holding-the-sequencer transaction (in_sync_recorder.h).
//
// Answer parsers take the HTTP status and the body. An error answer ({"error", "message",
// "code"} with a gRPC code, or a keepalive stream's {"error": {...}}) becomes a Status:
// NotFound for gRPC NOT_FOUND (a lease that expired), Unavailable for UNAVAILABLE,
// DEADLINE_EXCEEDED and any 5xx (no leader, no quorum, request timed out), FailedPrecondition
// otherwise; the message names etcd's own text. A body that is not the expected JSON is DataLoss.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace vsc::director::etcd {

struct KeyValue {
  std::string key;
  std::string value;
  int64_t create_revision = 0;
  int64_t mod_revision = 0;
  int64_t lease = 0;  // 0: not attached to a lease
};

struct Lease {
  int64_t id = 0;
  int64_t ttl_s = 0;  // as granted (etcd raises a TTL below its minimum)
};

struct TxnResult {
  bool succeeded = false;      // the compare held: the put was made
  std::optional<KeyValue> kv;  // the key as it stands after the transaction
  int64_t revision = 0;        // the store's revision after the transaction
};

// Request bodies.
std::string GrantBody(int64_t ttl_s);
std::string LeaseIdBody(int64_t id);  // keepalive and revoke
std::string RangeBody(std::string_view key);
// compare create_revision(key) == 0 → put(key, value, lease) and read it back; else read it.
std::string CreateWithLeaseBody(std::string_view key, std::string_view value, int64_t lease_id);
// compare mod_revision(key) == mod_revision → put(key, value) and read it back; else read it.
// etcd compares an absent key as mod_revision 0, so 0 creates the key only if it is absent.
std::string PutIfModRevisionBody(std::string_view key, std::string_view value,
                                 int64_t mod_revision);
// compare create_revision(guard) == create_revision → put(key, value) and read it back; else
// read it. The in-sync record (in_sync_recorder.h): only the director whose sequencer key etcd
// created at that revision (its epoch) may write it.
std::string PutIfCreatedAtBody(std::string_view guard, int64_t create_revision,
                               std::string_view key, std::string_view value);

// Answers.
Result<Lease> ParseGrant(int http_status, std::string_view body);
// The lease's remaining TTL in seconds; NotFound when etcd no longer knows the lease (it
// expired or was revoked): the keepalive stream answers such a lease with no TTL.
Result<int64_t> ParseKeepAlive(int http_status, std::string_view body);
// Revoke: ok, or NotFound when the lease is gone already.
Status ParseRevoke(int http_status, std::string_view body);
Result<std::optional<KeyValue>> ParseRange(int http_status, std::string_view body);
Result<TxnResult> ParseTxn(int http_status, std::string_view body);

// Watch (POST /v3/watch): the answer is a stream of JSON messages, one per line.
std::string WatchCreateBody(std::string_view key, int64_t start_revision);
struct WatchEvent {
  bool deleted = false;  // DELETE (a lease's expiry deletes its keys); else PUT
  KeyValue kv;           // a DELETE's kv holds the key and its mod_revision only
};
struct WatchMessage {
  bool created = false;   // the watch is set up
  bool canceled = false;  // etcd ended it (cancel_reason; compact_revision when compacted)
  std::string cancel_reason;
  int64_t compact_revision = 0;
  std::vector<WatchEvent> events;
};
// One message of the stream; an {"error": ...} message is its error.
Result<WatchMessage> ParseWatchMessage(std::string_view line);

}  // namespace vsc::director::etcd

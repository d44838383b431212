#include "director/etcd_codec.h"

#include <charconv>
#include <nlohmann/json.hpp>

#include "common/base64.h"

namespace vsc::director::etcd {
namespace {

using nlohmann::json;

// gRPC status codes that etcd's gateway puts in "code".
constexpr int kGrpcDeadlineExceeded = 4;
constexpr int kGrpcNotFound = 5;
constexpr int kGrpcUnavailable = 14;

std::string Snippet(std::string_view body) {
  return std::string(body.substr(0, 200)) + (body.size() > 200 ? "..." : "");
}

// The gateway writes int64 as a JSON string ("42"); a number is accepted too. Absent is 0.
Result<int64_t> Int(const json& obj, const char* field) {
  auto it = obj.find(field);
  if (it == obj.end() || it->is_null()) return int64_t{0};
  if (it->is_number_integer()) return it->get<int64_t>();
  if (it->is_string()) {
    const std::string& s = it->get_ref<const std::string&>();
    int64_t v = 0;
    auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (!s.empty() && ec == std::errc() && ptr == s.data() + s.size()) return v;
  }
  return DataLoss(std::string("etcd answer: field \"") + field + "\" is not an integer");
}

// Lenient reads of optional fields: a field of another type counts as absent (json::value
// would throw).
int IntOr(const json& obj, const char* field, int fallback) {
  auto it = obj.find(field);
  return it != obj.end() && it->is_number_integer() ? it->get<int>() : fallback;
}
std::string TextOr(const json& obj, const char* field) {
  auto it = obj.find(field);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// The error an answer carries, if it is one: {"error": "...", "code": N} or, in a stream,
// {"error": {"grpc_code": N, "http_code": H, "message": "..."}}.
std::optional<Status> ErrorOf(int http_status, const json& j, std::string_view body) {
  int code = 0;
  std::string message;
  if (j.is_object() && j.contains("error")) {
    const json& e = j["error"];
    if (e.is_object()) {
      code = IntOr(e, "grpc_code", 0);
      message = TextOr(e, "message");
    } else {
      code = IntOr(j, "code", 0);
      message = TextOr(j, "message");
      if (message.empty() && e.is_string()) message = e.get<std::string>();
    }
  } else if (http_status / 100 == 2) {
    return std::nullopt;
  }
  if (message.empty()) message = "HTTP " + std::to_string(http_status) + ": " + Snippet(body);
  message = "etcd: " + message;
  if (code == kGrpcNotFound) return NotFound(message);
  if (code == kGrpcUnavailable || code == kGrpcDeadlineExceeded || http_status >= 500) {
    return Unavailable(message);
  }
  return FailedPrecondition(message);
}

// The answer as a JSON object, or its error.
Result<json> Answer(int http_status, std::string_view body) {
  json j = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    if (http_status / 100 != 2) {
      return Unavailable("etcd: HTTP " + std::to_string(http_status) + ": " + Snippet(body));
    }
    return DataLoss("etcd answer is not a JSON object: " + Snippet(body));
  }
  if (auto err = ErrorOf(http_status, j, body)) return *err;
  return j;
}

Result<std::string> Bytes(const json& obj, const char* field) {
  auto it = obj.find(field);
  if (it == obj.end()) return std::string();
  if (!it->is_string()) {
    return DataLoss(std::string("etcd answer: field \"") + field + "\" is not a string");
  }
  auto decoded = Base64Decode(it->get_ref<const std::string&>());
  if (!decoded.ok())
    return DataLoss("etcd answer: " + std::string(field) + ": " + decoded.status().message());
  return std::move(decoded).value();
}

Result<KeyValue> KvOf(const json& kv);

Result<std::optional<KeyValue>> FirstKv(const json& range) {
  auto kvs = range.find("kvs");
  if (kvs == range.end() || !kvs->is_array() || kvs->empty()) {
    return std::optional<KeyValue>();
  }
  VSC_ASSIGN_OR_RETURN(KeyValue out, KvOf(kvs->front()));
  return std::optional<KeyValue>(std::move(out));
}

Result<KeyValue> KvOf(const json& kv) {
  if (!kv.is_object()) return DataLoss("etcd answer: a kv is not an object");
  KeyValue out;
  VSC_ASSIGN_OR_RETURN(out.key, Bytes(kv, "key"));
  VSC_ASSIGN_OR_RETURN(out.value, Bytes(kv, "value"));
  VSC_ASSIGN_OR_RETURN(out.create_revision, Int(kv, "create_revision"));
  VSC_ASSIGN_OR_RETURN(out.mod_revision, Int(kv, "mod_revision"));
  VSC_ASSIGN_OR_RETURN(out.lease, Int(kv, "lease"));
  return out;
}

const json* Field(const json& obj, const char* snake, const char* camel) {
  if (auto it = obj.find(snake); it != obj.end()) return &*it;
  if (auto it = obj.find(camel); it != obj.end()) return &*it;
  return nullptr;
}

}  // namespace

std::string GrantBody(int64_t ttl_s) { return json{{"TTL", std::to_string(ttl_s)}}.dump(); }

std::string LeaseIdBody(int64_t id) { return json{{"ID", std::to_string(id)}}.dump(); }

std::string RangeBody(std::string_view key) { return json{{"key", Base64Encode(key)}}.dump(); }

namespace {

// compare(target(guard) == expected) → put(key, value[, lease]) and read it back; else read it.
std::string GuardedPutBody(std::string_view guard, std::string_view key, std::string_view value,
                           const char* target, const char* field, int64_t expected,
                           int64_t lease_id) {
  const std::string k = Base64Encode(key);
  json read = {{"request_range", {{"key", k}}}};
  json put_fields = {{"key", k}, {"value", Base64Encode(value)}};
  if (lease_id != 0) put_fields["lease"] = std::to_string(lease_id);
  json put = {{"request_put", put_fields}};
  json body = {
      {"compare", json::array({{{"target", target},
                                {"result", "EQUAL"},
                                {"key", Base64Encode(guard)},
                                {field, std::to_string(expected)}}})},
      {"success", json::array({put, read})},
      {"failure", json::array({read})},
  };
  return body.dump();
}

}  // namespace

std::string CreateWithLeaseBody(std::string_view key, std::string_view value, int64_t lease_id) {
  return GuardedPutBody(key, key, value, "CREATE", "create_revision", 0, lease_id);
}

std::string PutIfModRevisionBody(std::string_view key, std::string_view value,
                                 int64_t mod_revision) {
  return GuardedPutBody(key, key, value, "MOD", "mod_revision", mod_revision, 0);
}

std::string PutIfCreatedAtBody(std::string_view guard, int64_t create_revision,
                               std::string_view key, std::string_view value) {
  return GuardedPutBody(guard, key, value, "CREATE", "create_revision", create_revision, 0);
}

Result<Lease> ParseGrant(int http_status, std::string_view body) {
  VSC_ASSIGN_OR_RETURN(json j, Answer(http_status, body));
  Lease lease;
  VSC_ASSIGN_OR_RETURN(lease.id, Int(j, "ID"));
  VSC_ASSIGN_OR_RETURN(lease.ttl_s, Int(j, "TTL"));
  if (lease.id == 0 || lease.ttl_s <= 0) {
    return DataLoss("etcd lease grant answered no lease: " + Snippet(body));
  }
  return lease;
}

Result<int64_t> ParseKeepAlive(int http_status, std::string_view body) {
  VSC_ASSIGN_OR_RETURN(json j, Answer(http_status, body));
  auto result = j.find("result");
  if (result == j.end() || !result->is_object()) {
    return DataLoss("etcd keepalive answer without a result: " + Snippet(body));
  }
  VSC_ASSIGN_OR_RETURN(int64_t ttl, Int(*result, "TTL"));
  if (ttl <= 0) return NotFound("etcd: the lease expired (keepalive answered no TTL)");
  return ttl;
}

Status ParseRevoke(int http_status, std::string_view body) {
  auto j = Answer(http_status, body);
  return j.ok() ? Status::Ok() : j.status();
}

Result<std::optional<KeyValue>> ParseRange(int http_status, std::string_view body) {
  VSC_ASSIGN_OR_RETURN(json j, Answer(http_status, body));
  return FirstKv(j);
}

Result<TxnResult> ParseTxn(int http_status, std::string_view body) {
  VSC_ASSIGN_OR_RETURN(json j, Answer(http_status, body));
  TxnResult out;
  auto succeeded = j.find("succeeded");
  out.succeeded = succeeded != j.end() && succeeded->is_boolean() && succeeded->get<bool>();
  if (auto header = j.find("header"); header != j.end() && header->is_object()) {
    VSC_ASSIGN_OR_RETURN(out.revision, Int(*header, "revision"));
  }
  auto responses = j.find("responses");
  if (responses == j.end() || !responses->is_array()) {
    return DataLoss("etcd txn answer without responses: " + Snippet(body));
  }
  for (const json& r : *responses) {
    if (!r.is_object()) continue;
    if (const json* range = Field(r, "response_range", "responseRange")) {
      VSC_ASSIGN_OR_RETURN(out.kv, FirstKv(*range));
    }
  }
  return out;
}

std::string WatchCreateBody(std::string_view key, int64_t start_revision) {
  return json{{"create_request",
               {{"key", Base64Encode(key)}, {"start_revision", std::to_string(start_revision)}}}}
      .dump();
}

Result<WatchMessage> ParseWatchMessage(std::string_view line) {
  VSC_ASSIGN_OR_RETURN(json j, Answer(200, line));
  auto result = j.find("result");
  if (result == j.end() || !result->is_object()) {
    return DataLoss("etcd watch message without a result: " + Snippet(line));
  }
  WatchMessage m;
  m.created = result->value("created", false) == true;
  m.canceled = result->value("canceled", false) == true;
  m.cancel_reason = TextOr(*result, "cancel_reason");
  VSC_ASSIGN_OR_RETURN(m.compact_revision, Int(*result, "compact_revision"));
  auto events = result->find("events");
  if (events == result->end()) return m;
  if (!events->is_array()) return DataLoss("etcd watch message: events is not an array");
  for (const json& e : *events) {
    if (!e.is_object()) return DataLoss("etcd watch message: an event is not an object");
    WatchEvent ev;
    ev.deleted = TextOr(e, "type") == "DELETE";  // PUT is the default, left out
    auto kv = e.find("kv");
    if (kv != e.end()) {
      VSC_ASSIGN_OR_RETURN(ev.kv, KvOf(*kv));
    }
    m.events.push_back(std::move(ev));
  }
  return m;
}

}  // namespace vsc::director::etcd

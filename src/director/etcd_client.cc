#include "director/etcd_client.h"

#include <charconv>

#include "net/http_client.h"

namespace vsc::director {

Result<EtcdEndpoint> ParseEtcdEndpoint(std::string_view text) {
  const std::string original(text);
  if (text.starts_with("https://")) {
    return InvalidArgument("etcd endpoint '" + original +
                           "': https is not supported; give etcd's plain-HTTP client URL");
  }
  if (text.starts_with("http://")) text.remove_prefix(7);
  if (!text.empty() && text.back() == '/') text.remove_suffix(1);
  EtcdEndpoint ep;
  size_t colon = text.rfind(':');
  if (colon == std::string_view::npos || colon == 0) {
    return InvalidArgument("etcd endpoint '" + original +
                           "': expected HOST:PORT, e.g. 127.0.0.1:2379");
  }
  std::string_view host = text.substr(0, colon);
  if (host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  const std::string_view port = text.substr(colon + 1);
  unsigned p = 0;
  auto [ptr, ec] = std::from_chars(port.data(), port.data() + port.size(), p);
  if (host.empty() || port.empty() || ec != std::errc() || ptr != port.data() + port.size() ||
      p == 0 || p > 65535) {
    return InvalidArgument("etcd endpoint '" + original +
                           "': expected HOST:PORT with a port 1-65535, e.g. 127.0.0.1:2379");
  }
  ep.host = std::string(host);
  ep.port = static_cast<uint16_t>(p);
  return ep;
}

EtcdClient::EtcdClient(std::vector<EtcdEndpoint> endpoints, Duration timeout)
    : endpoints_(std::move(endpoints)), timeout_(timeout) {}

template <typename T, typename Parse>
Result<T> EtcdClient::Call(std::string_view path, const std::string& body, Parse parse) {
  if (endpoints_.empty()) return FailedPrecondition("etcd: no endpoint configured");
  std::string errors;
  for (size_t i = 0; i < endpoints_.size(); ++i) {
    const size_t k = (preferred_ + i) % endpoints_.size();
    const EtcdEndpoint& ep = endpoints_[k];
    auto resp = net::HttpRequestSync(ep.host, ep.port, "POST", path, body,
                                     {{"Content-Type", "application/json"}}, timeout_);
    Result<T> out = resp.ok() ? parse(resp->status, resp->body) : Result<T>(resp.status());
    if (out.ok() || out.status().code() != Code::kUnavailable) {
      if (resp.ok()) preferred_ = k;
      return out;
    }
    if (!errors.empty()) errors += "; ";
    errors += ep.Text() + ": " + out.status().message();
  }
  return Unavailable("etcd: no endpoint answered " + std::string(path) + " (" + errors + ")");
}

Result<etcd::Lease> EtcdClient::Grant(int64_t ttl_s) {
  return Call<etcd::Lease>("/v3/lease/grant", etcd::GrantBody(ttl_s), etcd::ParseGrant);
}

Result<int64_t> EtcdClient::KeepAlive(int64_t lease_id) {
  return Call<int64_t>("/v3/lease/keepalive", etcd::LeaseIdBody(lease_id), etcd::ParseKeepAlive);
}

Status EtcdClient::Revoke(int64_t lease_id) {
  auto r = Call<bool>("/v3/lease/revoke", etcd::LeaseIdBody(lease_id),
                      [](int status, std::string_view body) -> Result<bool> {
                        Status s = etcd::ParseRevoke(status, body);
                        if (!s.ok() && s.code() != Code::kNotFound) return s;
                        return true;
                      });
  return r.ok() ? Status::Ok() : r.status();
}

Result<std::optional<etcd::KeyValue>> EtcdClient::Get(std::string_view key) {
  return Call<std::optional<etcd::KeyValue>>("/v3/kv/range", etcd::RangeBody(key),
                                             etcd::ParseRange);
}

Result<etcd::TxnResult> EtcdClient::CreateWithLease(std::string_view key, std::string_view value,
                                                    int64_t lease_id) {
  return Call<etcd::TxnResult>("/v3/kv/txn", etcd::CreateWithLeaseBody(key, value, lease_id),
                               etcd::ParseTxn);
}

Result<etcd::TxnResult> EtcdClient::PutIfModRevision(std::string_view key, std::string_view value,
                                                     int64_t mod_revision) {
  return Call<etcd::TxnResult>("/v3/kv/txn", etcd::PutIfModRevisionBody(key, value, mod_revision),
                               etcd::ParseTxn);
}

Result<etcd::TxnResult> EtcdClient::PutIfCreatedAt(std::string_view guard, int64_t create_revision,
                                                   std::string_view key, std::string_view value) {
  return Call<etcd::TxnResult>(
      "/v3/kv/txn", etcd::PutIfCreatedAtBody(guard, create_revision, key, value), etcd::ParseTxn);
}

}  // namespace vsc::director

#include "cli/sql_probe.h"

#include "net/http_client.h"

namespace vsc::cli {

std::optional<std::string> ReplicationOffMessage(const std::string& host, uint16_t http_port,
                                                 Duration timeout) {
  auto r = net::HttpRequestSync(host, http_port, "GET", "/db/query?q=SELECT%201", "", {}, timeout);
  if (!r.ok() || r->status != 503) return std::nullopt;
  std::string body = r->body;
  while (!body.empty() && (body.back() == '\n' || body.back() == '\r')) body.pop_back();
  if (body.find("replication is not enabled on this director") == std::string::npos) {
    return std::nullopt;
  }
  return body;
}

}  // namespace vsc::cli

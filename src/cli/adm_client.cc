#include "cli/adm_client.h"

#include <chrono>
#include <nlohmann/json.hpp>

#include "cli/secrets.h"
#include "net/endpoint.h"
#include "net/http_client.h"

namespace vsc::cli {

Result<net::HttpResponse> SendAdmin(const AdminTarget& target, const std::string& method,
                                    const std::string& path, const std::string& body,
                                    Duration timeout) {
  const std::string address = target.Address();
  auto ep = net::ParseTcpEndpoint(address);
  if (!ep.ok()) return ep.status().Annotate("--director/--admin-port");
  VSC_ASSIGN_OR_RETURN(auto token, ReadAdminToken(target.token_file));
  auto r = net::HttpRequestSync(
      ep->address().to_string(), ep->port(), method, path, body,
      {{"Authorization", "Bearer " + token}, {"Content-Type", "application/json"}}, timeout);
  if (!r.ok()) return r.status().Annotate("director admin API at " + address);
  return r;
}

std::string AnswerError(const net::HttpResponse& r) {
  auto j = nlohmann::json::parse(r.body, nullptr, false);
  if (!j.is_discarded() && j.is_object() && j.contains("error") && j["error"].is_string()) {
    return j["error"].get<std::string>();
  }
  return r.body;
}

}  // namespace vsc::cli

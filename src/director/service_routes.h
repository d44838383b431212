// ServiceRoutes: the admin API's virtual-service routes (issue 12), over a ServiceEditor.
//   GET    /v1/services                          every service: configuration, servers with
//                                                their state, check result, counters, rates
//   POST   /v1/services                          add a service (JSON, service_json.h), with
//                                                its servers (ipvsadm -A, then -a)
//   DELETE /v1/services                          remove every service (ipvsadm -C)
//   GET    /v1/services/save                     the table as `ipvsadm -S -n` text
//   POST   /v1/services/restore                  body = ipvsadm -S text; replaces the table
//   POST   /v1/services/zero                     {} or {"service": KEY}: ipvsadm -Z
//   GET    /v1/services/timeouts                 {"tcp": S, "tcpfin": S, "udp": S} (-L --timeout)
//   PUT    /v1/services/timeouts                 the same, 0 or absent = keep (ipvsadm --set)
//   GET    /v1/services/connections              ipvsadm -L -c (served by AdminApi::Serve, which
//                                                waits for the workers: FlowsJson below)
//   GET    /v1/services/{key}                    one service
//   PUT    /v1/services/{key}                    a JSON merge patch (RFC 7396) over its
//                                                configuration (ipvsadm -E); "server" given =
//                                                the whole list of servers
//   DELETE /v1/services/{key}                    ipvsadm -D
//   POST   /v1/services/{key}/servers/{addr}     add a server (ipvsadm -a)
//   PUT    /v1/services/{key}/servers/{addr}     merge patch over the server (ipvsadm -e)
//   DELETE /v1/services/{key}/servers/{addr}     ipvsadm -d
// {key} is PROTO/VIP:PORT ("tcp/10.0.0.1:80", "udp/[::1]:53"), percent-encoded or not; {addr}
// is ADDR:PORT. Every change copies the running table, edits the copy with the table's own
// operations and commits it whole: a failed call changes nothing, and its error carries
// ipvsadm's text ("Service not defined: ...") with 400/404/409. A success answers
// {"changes": [...]}, what the commit applied.
//
// Runs on the control thread; the editor and clock outlive it.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>

#include "common/clock.h"
#include "director/service_editor.h"
#include "director/stats.h"
#include "net/http_parser.h"
#include "net/http_response.h"

namespace vsc::director {

inline constexpr std::string_view kConnectionsPath = "/v1/services/connections";

// {"connections": [{"protocol", "state", "expire_s", "source", "virtual", "destination"}...],
//  "truncated": bool}, sorted by protocol, virtual address, source.
nlohmann::json FlowsJson(ServiceEditor::FlowList list);

class ServiceRoutes {
 public:
  ServiceRoutes(ServiceEditor& editor, const Clock& clock) : editor_(editor), clock_(clock) {}

  // Whether `path` is under /v1/services.
  static bool Owns(std::string_view path);
  // The caller has checked the bearer token.
  net::HttpResponse Handle(const net::HttpRequest& request);
  // Samples the counters for --rate; call once a second.
  void SampleRates();

 private:
  net::HttpResponse List() const;
  net::HttpResponse Get(const vservice::ServiceKey& key) const;
  net::HttpResponse Add(const std::string& body);
  net::HttpResponse Put(const vservice::ServiceKey& key, const std::string& body);
  net::HttpResponse AddServer(const vservice::ServiceKey& key, const vservice::AddrPort& dest,
                              const std::string& body);
  net::HttpResponse PutServer(const vservice::ServiceKey& key, const vservice::AddrPort& dest,
                              const std::string& body);
  net::HttpResponse Restore(const std::string& text);
  net::HttpResponse Zero(const std::string& body);
  net::HttpResponse SetTimeouts(const std::string& body);
  // Edits a copy of the running table and commits it.
  template <typename Edit>
  net::HttpResponse CommitEdit(Edit&& edit);
  nlohmann::json ServiceJson(const vservice::VirtualService& service,
                             const ServiceRuntime* runtime) const;

  ServiceEditor& editor_;
  const Clock& clock_;
  RateEstimator rates_;
};

}  // namespace vsc::director

// IpvsadmRequest: the admin API request that carries out one ipvsadm command for `vsc adm -A
// ...` (issue 12). Options that ipvsadm resets when not given are sent explicitly, so that the
// server-side merge patch (service_routes.h) does what ipvsadm does: -E without -p turns
// persistence off, -e without -w sets weight 1; what ipvsadm cannot express (a sorry server, a
// destination's check and agent id) is left out of the patch and kept.
//   -A POST /v1/services          -E PUT /v1/services/{key}       -D DELETE /v1/services/{key}
//   -a POST .../servers/{addr}    -e PUT .../servers/{addr}       -d DELETE .../servers/{addr}
//   -C DELETE /v1/services        -Z POST /v1/services/zero       -R POST /v1/services/restore
//   -L GET /v1/services[/{key}]   -S GET /v1/services/save
// Pure.
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"
#include "vservice/ipvsadm_args.h"

namespace vsc::director {

struct AdminRequest {
  std::string method;
  std::string target;
  std::string body;
  friend bool operator==(const AdminRequest&, const AdminRequest&) = default;
};

// "/v1/services/tcp%2F10.0.0.1%3A80".
std::string ServicePath(const vservice::ServiceKey& key);

// `rules` is -R's input (stdin). InvalidArgument for what vsc does not do: --set (the
// connection timeouts are director settings) and -L -c (no per-connection listing).
Result<AdminRequest> RequestFor(const vservice::Command& command, std::string_view rules = {});

}  // namespace vsc::director

// ServiceListing: GET /v1/services (or one service) rendered as `ipvsadm -L -n` renders IPVS
// (shared/reference/lvs_anchors.md §1.10): the same columns and widths, --stats and --rate
// numbers with ipvsadm's K/M/G abbreviation unless --exact. Added on the right of each
// destination row: its state and last check result; beside the address, the agent's server id
// in parentheses when it has one (the named `vsc adm` commands take ids). Pure: JSON in, text.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "vservice/ipvsadm_args.h"

namespace vsc::director {

// `answer` is GET /v1/services's {"services": [...]} or GET /v1/services/{key}'s one service.
std::string RenderServices(const nlohmann::json& answer, const vservice::ListFlags& flags);

// GET /v1/services/connections as ipvsadm -L -c -n prints it (lvs_anchors.md: "IPVS connection
// entries", rows "%-3s %-6s %-11s %-18s %-18s %s", expire as mm:ss); a truncated list says so.
std::string RenderConnections(const nlohmann::json& answer);

// GET /v1/services/timeouts as ipvsadm -L --timeout prints it:
// "Timeout (tcp tcpfin udp): 900 120 300\n".
std::string RenderTimeouts(const nlohmann::json& answer);

// ipvsadm's print_largenum: "%9llu" below 10^8, then K, M, G, T; --exact: the full value in
// a column at least 9 wide.
std::string LargeNum(uint64_t n, bool exact);

}  // namespace vsc::director

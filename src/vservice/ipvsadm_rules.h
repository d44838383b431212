// ipvsadm rules: the `ipvsadm -S -n` save format and the `ipvsadm -R` restore of it, over a
// VirtualServiceTable (shared/reference/virtual_services.md §1.2).
//
// SaveRules writes ipvsadm's exact lines, services in ipvsadm's order (family, protocol,
// address, port) and destinations by address then port:
//   -A -t 10.0.0.1:80 -s wlc
//   -A -u [2001:db8::1]:53 -s rr -p 360 -M 64 -o
//   -a -t 10.0.0.1:80 -r 192.168.1.11:80 -m -w 1
// One deliberate difference: a destination with thresholds gets " -x U -y L" (ipvsadm -S drops
// them, so its own -R loses them; ipvsadm -R reads these options, so the file still restores
// into ipvsadm). Addresses are always numeric, with or without -n. Sorry servers, checks,
// agent ids and on_marked_down are vsc's own and not part of this format.
//
// RestoreRules reads such a file: one ipvsadm command per line, an optional leading "ipvsadm"
// word, '#' to the end of a line is a comment, blank lines are skipped. Lines may hold -A -E -D
// -a -e -d -C. Unlike ipvsadm -R, which stops at a parse error but carries on after a refused
// line, it is all or nothing: every line is checked and applied to a copy, and the table
// changes only if every line succeeds. An error names its line: "line 3: Service not defined: ...".
//
// Pure.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "vservice/ipvsadm_args.h"
#include "vservice/virtual_service_table.h"

namespace vsc::vservice {

std::string SaveRules(const VirtualServiceTable& table);

struct RuleLine {
  size_t line = 0;  // 1-based line number in the input
  Command command;
};
// Parses every line (no table involved). InvalidArgument "line N: <ipvsadm's message>".
Result<std::vector<RuleLine>> ParseRules(std::string_view text);

// Applies one table command (-A -E -D -a -e -d -C) as ipvsadm would: options not given take
// ipvsadm's defaults (ToServiceConfig / ToDestConfig). What ipvsadm cannot express is kept:
// -E keeps the sorry server, -e keeps the agent id, the check and on_marked_down.
// InvalidArgument for a command that does not change the table (-L, -S, -R, -Z, --set).
Result<Change> Apply(VirtualServiceTable& table, const Command& command);

// Parses `text` and applies every line to `table`, atomically. Returns each line's Change.
Result<std::vector<Change>> RestoreRules(VirtualServiceTable& table, std::string_view text);

// The table that `text` describes, as `ipvsadm -C` then `ipvsadm -R` would build it, keeping
// from `current` what the save format cannot express: the sorry server of a service, and the
// agent id, check and on_marked_down of a destination, for every service and destination `text`
// keeps. So restoring what SaveRules wrote gives `current` back. All or nothing, errors as
// RestoreRules.
Result<VirtualServiceTable> ReplaceFromRules(const VirtualServiceTable& current,
                                             std::string_view text);

}  // namespace vsc::vservice

// CheckConfig: the health check of one destination, in keepalived's vocabulary and with its
// defaults (keepalived.conf(5); shared/reference/virtual_services.md §2). This is the
// configuration only: the checker that runs it lives on the director's control thread.
//
// TCP_CHECK   passes when a connect() completes within connect_timeout.
// HTTP_GET    GET `path`; passes when the status is in [status_min, status_max] and, if
//             `digest` is set, the MD5 of the body equals it.
// UDP_CHECK   sends `payload`; passes on a reply matching `expect` (hex, 'X' nibbles match
//             anything), or, with no `expect`, when no ICMP error arrives within connect_timeout.
// MISC_CHECK  runs `misc_path`; exit 0 passes, 1 fails, and with misc_dynamic 2..255 passes
//             and sets the weight to status - 2. misc_timeout defaults to delay_loop.
// A failure of an alive server is retried `retry` times, `delay_before_retry` apart, before
// the server is marked down; one success brings it up. `alpha` starts it down;
// `inhibit_on_failure` sets its weight to 0 instead of removing it.
//
// Pure value type; Validate() says what is wrong in keepalived's keyword names.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/clock.h"
#include "common/status.h"

namespace vsc::vservice {

enum class CheckType : uint8_t { kTcp, kHttpGet, kUdp, kMisc };

// "TCP_CHECK", "HTTP_GET", "UDP_CHECK", "MISC_CHECK".
std::string_view CheckTypeName(CheckType type);
Result<CheckType> ParseCheckType(std::string_view text);

struct CheckConfig {
  CheckType type = CheckType::kTcp;
  Duration delay_loop = std::chrono::seconds(60);      // KEEPALIVED_DEFAULT_DELAY
  Duration connect_timeout = std::chrono::seconds(5);  // alloc_vs: connection_to
  uint32_t retry = 1;
  Duration delay_before_retry = std::chrono::seconds(1);
  bool alpha = false;
  bool inhibit_on_failure = false;

  // HTTP_GET
  std::string path;
  uint16_t status_min = 200;
  uint16_t status_max = 299;
  std::string digest;  // 32 hex digits (genhash's MD5), empty = body not checked

  // UDP_CHECK
  std::string payload;  // hex bytes to send
  std::string expect;   // hex reply required, 'X' = any nibble; empty = no reply required

  // MISC_CHECK
  std::string misc_path;
  std::optional<Duration> misc_timeout;  // unset = delay_loop
  bool misc_dynamic = false;

  friend bool operator==(const CheckConfig&, const CheckConfig&) = default;
};

// keepalived's defaults for one checker type: retry 0 for MISC_CHECK, delay_before_retry 3 s
// for HTTP_GET, the values above otherwise.
CheckConfig DefaultCheck(CheckType type);

// The check a static destination gets when none is configured (issue 12): TCP_CHECK every
// second, connect_timeout 1 s, keepalived's other TCP_CHECK defaults (retry 1, 1 s apart).
CheckConfig DefaultStaticCheck();

// How long one probe may take before it counts as failed: misc_timeout (default delay_loop)
// for MISC_CHECK, connect_timeout for the others.
Duration ProbeTimeout(const CheckConfig& check);

// The longest a dead destination stays up, from its death to the verdict, when every probe
// runs to its timeout (a black hole): the wait for the next check, then retry + 1 probes
// with delay_before_retry between them:
//   delay_loop + (retry + 1) * ProbeTimeout + retry * delay_before_retry.
// keepalived's rule of thumb, delay_loop + retry * (connect_timeout + delay_before_retry),
// leaves out the first probe's timeout; it is exact for a destination that refuses at once,
// whose worst case is delay_loop + retry * delay_before_retry (plus round trips).
// MISC_CHECK's kill grace (SIGKILL 2 s after SIGTERM) is not included.
Duration WorstCaseDetectionTime(const CheckConfig& check);

// InvalidArgument when a duration is not positive, a field belongs to another checker type,
// HTTP_GET has no path starting with '/', the status range is not within 100..599, digest is
// not 32 hex digits, payload/expect are not hex, or MISC_CHECK has no misc_path.
Status Validate(const CheckConfig& check);

}  // namespace vsc::vservice

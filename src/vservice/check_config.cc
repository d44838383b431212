#include "vservice/check_config.h"

#include <array>
#include <cctype>

namespace vsc::vservice {
namespace {

constexpr std::array<std::string_view, 4> kTypeNames = {"TCP_CHECK", "HTTP_GET", "UDP_CHECK",
                                                        "MISC_CHECK"};

bool IsHex(std::string_view text, bool allow_x) {
  for (char c : text) {
    if (!std::isxdigit(static_cast<unsigned char>(c)) && !(allow_x && (c == 'X' || c == 'x'))) {
      return false;
    }
  }
  return text.size() % 2 == 0;
}

Status Bad(const CheckConfig& c, std::string what) {
  return InvalidArgument(std::string(CheckTypeName(c.type)) + ": " + std::move(what));
}

// A field set on a checker type that does not read it is a configuration mistake, not
// something to ignore: say which type it belongs to.
Status CheckForeignFields(const CheckConfig& c) {
  const CheckConfig d;
  if (c.type != CheckType::kHttpGet && (c.path != d.path || c.status_min != d.status_min ||
                                        c.status_max != d.status_max || c.digest != d.digest)) {
    return Bad(c, "path, status_code and digest are HTTP_GET options; remove them");
  }
  if (c.type != CheckType::kUdp && (c.payload != d.payload || c.expect != d.expect)) {
    return Bad(c, "payload and require_reply are UDP_CHECK options; remove them");
  }
  if (c.type != CheckType::kMisc &&
      (c.misc_path != d.misc_path || c.misc_timeout || c.misc_dynamic)) {
    return Bad(c, "misc_path, misc_timeout and misc_dynamic are MISC_CHECK options; remove them");
  }
  return Status::Ok();
}

Status CheckTypeFields(const CheckConfig& c) {
  switch (c.type) {
    case CheckType::kHttpGet:
      if (c.path.empty() || c.path.front() != '/') {
        return Bad(c, "url path '" + c.path + "' must start with '/', e.g. path /health");
      }
      if (c.status_min < 100 || c.status_max > 599 || c.status_min > c.status_max) {
        return Bad(c, "status_code range " + std::to_string(c.status_min) + "-" +
                          std::to_string(c.status_max) + " is not within 100..599");
      }
      if (!c.digest.empty() && (c.digest.size() != 32 || !IsHex(c.digest, false))) {
        return Bad(c, "digest must be 32 hex digits (the MD5 of the body, from genhash)");
      }
      return Status::Ok();
    case CheckType::kUdp:
      if (!IsHex(c.payload, false)) return Bad(c, "payload must be hex bytes, e.g. 0a0b");
      if (!IsHex(c.expect, true)) {
        return Bad(c, "require_reply must be hex bytes, 'X' for any nibble, e.g. 0aXX");
      }
      return Status::Ok();
    case CheckType::kMisc:
      if (c.misc_path.empty()) return Bad(c, "misc_path is required: the command to run");
      if (c.misc_timeout && c.misc_timeout->count() <= 0) {
        return Bad(c, "misc_timeout must be positive");
      }
      return Status::Ok();
    case CheckType::kTcp:
      return Status::Ok();
  }
  return Status::Ok();
}

}  // namespace

std::string_view CheckTypeName(CheckType type) { return kTypeNames[static_cast<size_t>(type)]; }

Result<CheckType> ParseCheckType(std::string_view text) {
  for (size_t i = 0; i < kTypeNames.size(); ++i) {
    if (text == kTypeNames[i]) return static_cast<CheckType>(i);
  }
  return InvalidArgument("check type '" + std::string(text) +
                         "' is not one of TCP_CHECK, HTTP_GET, UDP_CHECK, MISC_CHECK");
}

CheckConfig DefaultCheck(CheckType type) {
  CheckConfig c;
  c.type = type;
  if (type == CheckType::kMisc) c.retry = 0;
  if (type == CheckType::kHttpGet) c.delay_before_retry = std::chrono::seconds(3);
  return c;
}

CheckConfig DefaultStaticCheck() {
  CheckConfig c = DefaultCheck(CheckType::kTcp);
  c.delay_loop = std::chrono::seconds(1);
  c.connect_timeout = std::chrono::seconds(1);
  return c;
}

Duration ProbeTimeout(const CheckConfig& c) {
  if (c.type == CheckType::kMisc) return c.misc_timeout.value_or(c.delay_loop);
  return c.connect_timeout;
}

Duration WorstCaseDetectionTime(const CheckConfig& c) {
  const int64_t retries = c.retry;
  return c.delay_loop + (retries + 1) * ProbeTimeout(c) + retries * c.delay_before_retry;
}

Status Validate(const CheckConfig& c) {
  if (c.delay_loop.count() <= 0) return Bad(c, "delay_loop must be positive");
  if (c.connect_timeout.count() <= 0) return Bad(c, "connect_timeout must be positive");
  if (c.delay_before_retry.count() < 0) return Bad(c, "delay_before_retry must not be negative");
  VSC_RETURN_IF_ERROR(CheckForeignFields(c));
  return CheckTypeFields(c);
}

}  // namespace vsc::vservice

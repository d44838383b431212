// Percent-encoding of URL path segments (RFC 3986 §2.1), for admin API paths that carry
// addresses: /v1/services/udp%2F%5B%3A%3A1%5D%3A53. Pure.
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"

namespace vsc::net {

// Every byte outside RFC 3986's unreserved set (ALPHA DIGIT - . _ ~) becomes %XX.
std::string PercentEncode(std::string_view text);
// %XX sequences become their byte; InvalidArgument for a '%' not followed by two hex digits.
Result<std::string> PercentDecode(std::string_view text);

}  // namespace vsc::net

// Standard base64 (RFC 4648 §4, with '=' padding), as rqlite shows BLOBs. Pure; thread safe.
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"

namespace vsc {

std::string Base64Encode(std::string_view bytes);
// The bytes of a base64 text: etcd's keys and values in its JSON gateway, HTTP basic auth.
// Padding is optional (RFC 4648 §3.2), but when present it completes the last group of four.
// A character outside the alphabet, a lone last character or bits after the last byte are
// InvalidArgument.
Result<std::string> Base64Decode(std::string_view text);

}  // namespace vsc

// UTF-8 validity: proto3 string fields must hold valid UTF-8, and SQLite does not check TEXT.
// Pure; thread safe.
#pragma once

#include <string_view>

namespace vsc {

// True when `bytes` is valid UTF-8 (no overlong forms, surrogates or values past U+10FFFF).
bool IsValidUtf8(std::string_view bytes);

}  // namespace vsc

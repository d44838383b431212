// Fuzzes ClusterKey::FromHex, the parser of key files and of VSC_CLUSTER_KEY
// (src/proto/cluster_key.h). Whatever parses must print back (Hex) as the trimmed input in
// lowercase; whatever is refused must be refused with one of the two fixed messages, which name a
// length or a position and never quote the (secret) input.
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "proto/cluster_key.h"

namespace {

bool IsKeySpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

std::string_view Trim(std::string_view s) {
  while (!s.empty() && IsKeySpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsKeySpace(s.back())) s.remove_suffix(1);
  return s;
}

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  const std::string_view trimmed = Trim(in);
  auto key = vsc::proto::ClusterKey::FromHex(in);
  if (key.ok()) {
    std::string lower(trimmed);
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (key->Hex() != lower) std::abort();
    auto again = vsc::proto::ClusterKey::FromHex(key->Hex());
    if (!again.ok() || !(*again == *key)) std::abort();
    return 0;
  }
  const std::string& m = key.status().message();
  if (key.status().code() != vsc::Code::kInvalidArgument) std::abort();
  const std::string length_error = "cluster key must be 64 hex digits (32 bytes), found " +
                                   std::to_string(trimmed.size()) + " characters; ";
  const std::string_view digit_error =
      "cluster key has a character that is not a hex digit at position ";
  if (StartsWith(m, length_error)) {
    if (trimmed.size() == 64) std::abort();
    return 0;
  }
  if (!StartsWith(m, digit_error)) std::abort();
  const size_t pos = std::stoul(m.substr(digit_error.size()));
  if (trimmed.size() != 64 || pos >= 64 || std::isxdigit(static_cast<unsigned char>(trimmed[pos])))
    std::abort();
  return 0;
}

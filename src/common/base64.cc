#include "common/base64.h"

#include <cstdint>

namespace vsc {

namespace {

constexpr const char* kAlphabet =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

int Sextet(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

}  // namespace

std::string Base64Encode(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  size_t i = 0;
  auto byte = [&](size_t k) { return static_cast<uint32_t>(static_cast<uint8_t>(bytes[k])); };
  for (; i + 3 <= bytes.size(); i += 3) {
    const uint32_t n = (byte(i) << 16) | (byte(i + 1) << 8) | byte(i + 2);
    for (int shift = 18; shift >= 0; shift -= 6) out.push_back(kAlphabet[(n >> shift) & 63]);
  }
  const size_t left = bytes.size() - i;
  if (left > 0) {
    const uint32_t n = (byte(i) << 16) | (left == 2 ? byte(i + 1) << 8 : 0);
    out.push_back(kAlphabet[(n >> 18) & 63]);
    out.push_back(kAlphabet[(n >> 12) & 63]);
    out.push_back(left == 2 ? kAlphabet[(n >> 6) & 63] : '=');
    out.push_back('=');
  }
  return out;
}

Result<std::string> Base64Decode(std::string_view text) {
  size_t pad = 0;
  while (pad < 2 && !text.empty() && text.back() == '=') {
    text.remove_suffix(1);
    ++pad;
  }
  if ((pad > 0 && (text.size() + pad) % 4 != 0) || text.size() % 4 == 1) {
    return InvalidArgument("base64: " + std::to_string(text.size() + pad) +
                           " characters do not make whole bytes (wrong length or padding)");
  }
  std::string out;
  out.reserve(text.size() / 4 * 3 + 2);
  uint32_t acc = 0;
  int bits = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const int v = Sextet(text[i]);
    if (v < 0) {
      return InvalidArgument("base64: character " + std::to_string(i + 1) +
                             " is outside the alphabet");
    }
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xff));
    }
  }
  if ((acc & ((1u << bits) - 1)) != 0) {
    return InvalidArgument("base64: bits after the last byte are not zero");
  }
  return out;
}

}  // namespace vsc

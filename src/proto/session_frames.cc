#include "proto/session_frames.h"

#include <openssl/rand.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "proto/frame.h"

namespace vsc::proto {

Nonce NewNonce() {
  Nonce n;
  if (RAND_bytes(n.data(), static_cast<int>(n.size())) != 1) {
    std::fprintf(stderr, "vsc: OpenSSL RAND_bytes failed to make a session nonce\n");
    std::abort();
  }
  return n;
}

std::string NonceString(const Nonce& nonce) {
  return std::string(reinterpret_cast<const char*>(nonce.data()), nonce.size());
}

std::vector<uint8_t> ChallengeFrame(const Nonce& nonce) {
  std::vector<uint8_t> payload(kChallengeMagic, kChallengeMagic + sizeof(kChallengeMagic));
  payload.insert(payload.end(), nonce.begin(), nonce.end());
  std::vector<uint8_t> out;
  AppendFrame(out, payload);
  return out;
}

Result<Nonce> ParseChallenge(std::span<const uint8_t> payload) {
  if (payload.size() != kChallengeBytes ||
      std::memcmp(payload.data(), kChallengeMagic, sizeof(kChallengeMagic)) != 0) {
    return InvalidArgument("the director's first frame is not a session challenge (\"VSCH\" and " +
                           std::to_string(kNonceBytes) +
                           " bytes); is that port a vsc "
                           "director's control port, of the same version?");
  }
  Nonce n;
  std::memcpy(n.data(), payload.data() + sizeof(kChallengeMagic), n.size());
  return n;
}

std::vector<uint8_t> AuthFailedFrame() {
  std::vector<uint8_t> out;
  AppendFrame(out, std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(kAuthFailedMagic),
                                            sizeof(kAuthFailedMagic)));
  return out;
}

bool IsAuthFailed(std::span<const uint8_t> payload) {
  return payload.size() == sizeof(kAuthFailedMagic) &&
         std::memcmp(payload.data(), kAuthFailedMagic, sizeof(kAuthFailedMagic)) == 0;
}

}  // namespace vsc::proto

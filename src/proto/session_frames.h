// The two unauthenticated payloads of a TCP control or write session (docs/protocol.md
// "Session handshake"), carried in ordinary frames (frame.h) beside sealed envelopes:
//
//   challenge    "VSCH" | nonce[16]   director -> real server, first frame of a control session
//   auth-failed  "VSAF"               director -> peer, before it closes a session whose frame
//                                     did not open as an authentic, fresh envelope
//
// Neither is authenticated, on purpose: the challenge is only a number the real server must
// seal into its Register (proving that Register is fresh), and the auth-failed frame carries no
// detail, the same 4 bytes for every failure kind, so it tells an attacker nothing beyond the
// closed connection they would see anyway. Pure; thread safe.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/status.h"

namespace vsc::proto {

inline constexpr size_t kNonceBytes = 16;
using Nonce = std::array<uint8_t, kNonceBytes>;

inline constexpr char kChallengeMagic[4] = {'V', 'S', 'C', 'H'};
inline constexpr char kAuthFailedMagic[4] = {'V', 'S', 'A', 'F'};
inline constexpr size_t kChallengeBytes = sizeof(kChallengeMagic) + kNonceBytes;

// 16 bytes from the operating system's CSPRNG (OpenSSL RAND_bytes). A failure of the system's
// random source is a broken invariant and aborts.
Nonce NewNonce();
std::string NonceString(const Nonce& nonce);  // the bytes, for a protobuf `bytes` field

// The framed challenge (length + payload), ready to write.
std::vector<uint8_t> ChallengeFrame(const Nonce& nonce);
// The nonce of a challenge payload; InvalidArgument when the payload is not one.
Result<Nonce> ParseChallenge(std::span<const uint8_t> payload);

// The framed auth-failed notice (length + payload), ready to write.
std::vector<uint8_t> AuthFailedFrame();
bool IsAuthFailed(std::span<const uint8_t> payload);

// What a client or agent prints when it receives the auth-failed notice.
inline constexpr char kAuthFailedText[] =
    "authentication failed: wrong cluster key? The director could not verify our message; use "
    "the director's cluster key (key_file, --key-file or $VSC_CLUSTER_KEY)";

}  // namespace vsc::proto

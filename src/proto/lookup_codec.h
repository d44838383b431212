// The data-path lookup protocol (DESIGN.md §9, §10; byte tables and test vectors in
// docs/protocol.md): a compact fixed-layout big-endian binary format for the hot path.
//
//   request         'V' 'L' | u8 version=1 | u8 type=1 | u64 request_id | u8 count (1..10)
//                   | count x u64 id
//   forward header  'V' 'F' | u8 version=1 | u8 flags | u32 client IPv4 | u16 client port
//                   | u16 reserved=0                      (director -> RS in `dr` mode, prepended
//                                                          to the client's request unchanged)
//   ... IPv6 form   'V' 'F' | u8 version=2 | u8 flags | 16 bytes client IPv6 | u16 client port
//                   | u16 reserved=0                      (an IPv6 client; a version-1 decoder
//                                                          refuses it as "unsupported version 2")
//   response        'V' 'L' | u8 version=1 | u8 type=2 | u64 request_id | u8 status | u8 count
//                   | count x (u64 id | u8 found | u8 node_len (<= 64) | node bytes)
//
// Over UDP one message is one datagram; over TCP each message is preceded by a 4-byte
// big-endian length (proto/frame.h), with kMaxLookupMessage as the frame limit.
//
// Sans-I/O and allocation-free except DecodeResponse (which owns the node names for clients).
// Every decoder is bounds-checked and canonical: a message it accepts re-encodes to exactly the
// same bytes, so a corrupted message is either refused or decodes to different values. Errors
// are InvalidArgument statuses whose message names the problem and starts with the message kind
// ("lookup request: count 11 exceeds the limit of 10 ids") so a server can count reasons.
// All functions are pure and safe to call from any thread.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace vsc::proto {

inline constexpr uint8_t kLookupMagic0 = 'V';
inline constexpr uint8_t kLookupMagic1 = 'L';
inline constexpr uint8_t kForwardMagic1 = 'F';
inline constexpr uint8_t kLookupVersion = 1;
inline constexpr uint8_t kLookupTypeRequest = 1;
inline constexpr uint8_t kLookupTypeResponse = 2;

inline constexpr size_t kMaxLookupIds = 10;
inline constexpr size_t kMaxNodeLen = 64;
// Largest datagram a lookup endpoint accepts (forward header included); below the usual
// 1500-byte Ethernet MTU minus IP/UDP headers so nothing is ever fragmented.
inline constexpr size_t kMaxLookupDatagram = 1400;
// Frame limit for lookups over TCP.
inline constexpr size_t kMaxLookupMessage = kMaxLookupDatagram;

inline constexpr size_t kRequestHeaderSize = 13;  // magic, version, type, request_id, count
inline constexpr size_t kMaxRequestSize = kRequestHeaderSize + 8 * kMaxLookupIds;  // 93
inline constexpr size_t kForwardHeaderSize = 12;  // the IPv4 form (version 1)
inline constexpr uint8_t kForwardVersionV6 = 2;
inline constexpr size_t kForwardHeaderV6Size = 24;  // the IPv6 form (version 2)
inline constexpr size_t kMaxForwardHeaderSize = kForwardHeaderV6Size;
inline constexpr size_t kResponseHeaderSize = 14;  // ... request_id, status, count
inline constexpr size_t kAnswerHeaderSize = 10;    // id, found, node_len
inline constexpr size_t kMaxResponseSize =
    kResponseHeaderSize + kMaxLookupIds * (kAnswerHeaderSize + kMaxNodeLen);  // 754
static_assert(kMaxResponseSize <= kMaxLookupDatagram, "a response must fit one datagram");

enum class LookupStatus : uint8_t {
  kOk = 0,
  kBadRequest = 1,
  kOverloaded = 2,
  kInternal = 3,
};
std::string_view LookupStatusName(LookupStatus status);

// ---- request ----

// A request held by value in a fixed array: no allocation on the hot path.
struct LookupRequest {
  uint64_t request_id = 0;
  uint8_t count = 0;  // 1..kMaxLookupIds for a valid request
  std::array<uint64_t, kMaxLookupIds> ids{};

  std::span<const uint64_t> Ids() const { return {ids.data(), count}; }
  // Builds a request from a span; `ids.size()` must be 1..kMaxLookupIds (else count stays 0 and
  // EncodeRequest refuses it).
  static LookupRequest Of(uint64_t request_id, std::span<const uint64_t> ids);
};

// A validated request read in place: `bytes` must outlive the view.
class LookupRequestView {
 public:
  uint64_t request_id() const { return request_id_; }
  size_t count() const { return count_; }
  uint64_t id(size_t i) const;  // i < count()
  LookupRequest ToRequest() const;

 private:
  friend Result<LookupRequestView> DecodeRequest(std::span<const uint8_t> bytes);
  uint64_t request_id_ = 0;
  size_t count_ = 0;
  const uint8_t* id_bytes_ = nullptr;
};

// Decodes exactly one request (no trailing bytes, no forward header).
Result<LookupRequestView> DecodeRequest(std::span<const uint8_t> bytes);
// Bytes EncodeRequest writes for `count` ids.
constexpr size_t RequestSize(size_t count) { return kRequestHeaderSize + 8 * count; }
// Writes the request into `out`; returns the bytes written, or 0 if `out` is too small or the
// count is not 1..kMaxLookupIds.
size_t EncodeRequest(const LookupRequest& request, std::span<uint8_t> out);

// ---- forward header (dr mode) ----

struct ForwardHeader {
  uint32_t client_ip = 0;  // IPv4 in host order (127.0.0.1 is 0x7f000001); 0 in the IPv6 form
  uint16_t client_port = 0;
  uint8_t flags = 0;  // no flag is defined in versions 1 and 2; carried through unchanged
  // The IPv6 form (version 2): the client's IPv6 address in network byte order.
  bool ipv6 = false;
  std::array<uint8_t, 16> client_ip6{};

  // kForwardHeaderSize or kForwardHeaderV6Size: where the client's message starts.
  size_t size() const { return ipv6 ? kForwardHeaderV6Size : kForwardHeaderSize; }
  static ForwardHeader V6(const std::array<uint8_t, 16>& address, uint16_t port, uint8_t flags = 0);
};

// Why a forward header was refused; kNone when it was not. Each has a fixed text
// (ForwardFaultText) so a receiver can drop and count without building a message.
enum class ForwardFault : uint8_t {
  kNone,
  kTruncated,           // shorter than its form (12 or 24 bytes)
  kBadMagic,            // not 'V' 'F'
  kUnsupportedVersion,  // neither 1 (IPv4) nor 2 (IPv6)
  kReservedNotZero,
  kZeroAddress,  // 0.0.0.0 or ::
  kMappedIpv4,   // an IPv4-mapped address (::ffff:a.b.c.d) in the IPv6 form: use version 1
  kZeroPort,
};
std::string_view ForwardFaultText(ForwardFault fault);

struct ForwardCheck {
  ForwardFault fault = ForwardFault::kNone;
  ForwardHeader header;  // valid when fault is kNone
};

// True when `bytes` starts with the forward-header magic 'V' 'F' (cheap dispatch; the header
// itself still has to be decoded).
bool HasForwardHeader(std::span<const uint8_t> bytes);
// Validates and reads the header at the start of `bytes`, either form, allocating nothing
// (the realserver's path for every forwarded datagram). The header is canonical: one it
// accepts re-encodes to the same bytes.
ForwardCheck CheckForwardHeader(std::span<const uint8_t> bytes);
// The same as a Result: refuses a wrong magic or version, a short header, a non-zero reserved
// field, address 0.0.0.0 or ::, an IPv4-mapped address in the IPv6 form, and port 0; the
// message is "forward header: " + ForwardFaultText (with the version or size where useful).
// What follows header.size() bytes is the client's message.
Result<ForwardHeader> DecodeForwardHeader(std::span<const uint8_t> bytes);
// The IPv4 form (`header.ipv6` must be false).
void EncodeForwardHeader(const ForwardHeader& header, std::span<uint8_t, kForwardHeaderSize> out);
// Either form, as `header.ipv6` says; returns header.size(), or 0 when `out` is shorter.
size_t WriteForwardHeader(const ForwardHeader& header, std::span<uint8_t> out);

// ---- response ----

// Builds a response directly in a caller buffer (no allocation). Add answers in order, then
// Finish. Once an Add fails, the writer refuses everything and Finish returns 0.
class ResponseWriter {
 public:
  ResponseWriter(std::span<uint8_t> out, uint64_t request_id, LookupStatus status);
  // Fails when the node name is longer than kMaxNodeLen, a not-found answer carries a node
  // name, there are already kMaxLookupIds answers, the status is not kOk, or `out` is full.
  Status Add(uint64_t id, bool found, std::string_view node);
  // Returns the total bytes written, or 0 if the buffer could not even hold the header or an
  // Add failed.
  size_t Finish();

 private:
  std::span<uint8_t> out_;
  size_t size_ = 0;
  uint8_t count_ = 0;
  bool failed_ = false;
};

struct LookupAnswer {
  uint64_t id = 0;
  bool found = false;
  std::string node;  // empty when !found
  bool operator==(const LookupAnswer&) const = default;
};

struct LookupResponse {
  uint64_t request_id = 0;
  LookupStatus status = LookupStatus::kOk;
  std::vector<LookupAnswer> answers;  // empty unless status is kOk
  bool operator==(const LookupResponse&) const = default;
};

// Decodes exactly one response. Beyond bounds, refuses: type other than 2, unknown status,
// answers on a non-ok status, more than kMaxLookupIds answers, found other than 0/1, a node
// name on a not-found answer, node_len over kMaxNodeLen, trailing bytes.
Result<LookupResponse> DecodeResponse(std::span<const uint8_t> bytes);
// Convenience encoder over ResponseWriter; returns bytes written or 0 (see ResponseWriter).
size_t EncodeResponse(const LookupResponse& response, std::span<uint8_t> out);
// Writes a response with no answers (kResponseHeaderSize bytes), typically with a non-ok
// status; returns 0 if `out` is too small.
size_t EncodeErrorResponse(uint64_t request_id, LookupStatus status, std::span<uint8_t> out);

}  // namespace vsc::proto

#include "proto/lookup_codec.h"

#include <algorithm>
#include <cstring>
#include <string>

namespace vsc::proto {
namespace {

uint16_t Load16(const uint8_t* p) { return static_cast<uint16_t>((p[0] << 8) | p[1]); }

uint32_t Load32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
}

uint64_t Load64(const uint8_t* p) { return (uint64_t{Load32(p)} << 32) | Load32(p + 4); }

void Store16(uint8_t* p, uint16_t v) {
  p[0] = static_cast<uint8_t>(v >> 8);
  p[1] = static_cast<uint8_t>(v);
}

void Store32(uint8_t* p, uint32_t v) {
  Store16(p, static_cast<uint16_t>(v >> 16));
  Store16(p + 2, static_cast<uint16_t>(v));
}

void Store64(uint8_t* p, uint64_t v) {
  Store32(p, static_cast<uint32_t>(v >> 32));
  Store32(p + 4, static_cast<uint32_t>(v));
}

void StoreLookupPrologue(uint8_t* p, uint8_t type, uint64_t request_id) {
  p[0] = kLookupMagic0;
  p[1] = kLookupMagic1;
  p[2] = kLookupVersion;
  p[3] = type;
  Store64(p + 4, request_id);
}

// Checks the 4 bytes shared by requests and responses. `what` is "lookup request" or
// "lookup response"; messages name the byte that was wrong so the server can count reasons.
Status CheckPrologue(std::span<const uint8_t> b, size_t header_size, uint8_t type,
                     const char* what) {
  if (b.size() < header_size) {
    return InvalidArgument(std::string(what) + ": truncated header (" + std::to_string(b.size()) +
                           " of " + std::to_string(header_size) + " bytes)");
  }
  if (b[0] != kLookupMagic0 || b[1] != kLookupMagic1) {
    return InvalidArgument(std::string(what) + ": bad magic (expected 'VL')");
  }
  if (b[2] != kLookupVersion) {
    return InvalidArgument(std::string(what) + ": unsupported version " + std::to_string(b[2]) +
                           " (this build speaks version 1)");
  }
  if (b[3] != type) {
    return InvalidArgument(std::string(what) + ": wrong message type " + std::to_string(b[3]) +
                           " (expected " + std::to_string(type) + ")");
  }
  return Status::Ok();
}

}  // namespace

std::string_view LookupStatusName(LookupStatus status) {
  switch (status) {
    case LookupStatus::kOk:
      return "ok";
    case LookupStatus::kBadRequest:
      return "bad request";
    case LookupStatus::kOverloaded:
      return "overloaded";
    case LookupStatus::kInternal:
      return "internal error";
  }
  return "unknown status";
}

// ---- request ----

LookupRequest LookupRequest::Of(uint64_t request_id, std::span<const uint64_t> ids) {
  LookupRequest r;
  r.request_id = request_id;
  if (!ids.empty() && ids.size() <= kMaxLookupIds) {
    r.count = static_cast<uint8_t>(ids.size());
    std::copy(ids.begin(), ids.end(), r.ids.begin());
  }
  return r;
}

uint64_t LookupRequestView::id(size_t i) const { return Load64(id_bytes_ + 8 * i); }

LookupRequest LookupRequestView::ToRequest() const {
  LookupRequest r;
  r.request_id = request_id_;
  r.count = static_cast<uint8_t>(count_);
  for (size_t i = 0; i < count_; ++i) r.ids[i] = id(i);
  return r;
}

Result<LookupRequestView> DecodeRequest(std::span<const uint8_t> b) {
  VSC_RETURN_IF_ERROR(CheckPrologue(b, kRequestHeaderSize, kLookupTypeRequest, "lookup request"));
  const size_t count = b[12];
  if (count == 0) return InvalidArgument("lookup request: count 0; send 1 to 10 ids");
  if (count > kMaxLookupIds) {
    return InvalidArgument("lookup request: count " + std::to_string(count) +
                           " exceeds the limit of 10 ids");
  }
  const size_t want = RequestSize(count);
  if (b.size() < want) {
    return InvalidArgument("lookup request: truncated ids (" + std::to_string(b.size()) + " of " +
                           std::to_string(want) + " bytes)");
  }
  if (b.size() > want) {
    return InvalidArgument("lookup request: " + std::to_string(b.size() - want) +
                           " trailing bytes after " + std::to_string(count) + " ids");
  }
  LookupRequestView v;
  v.request_id_ = Load64(b.data() + 4);
  v.count_ = count;
  v.id_bytes_ = b.data() + kRequestHeaderSize;
  return v;
}

size_t EncodeRequest(const LookupRequest& request, std::span<uint8_t> out) {
  if (request.count == 0 || request.count > kMaxLookupIds) return 0;
  const size_t size = RequestSize(request.count);
  if (out.size() < size) return 0;
  uint8_t* p = out.data();
  StoreLookupPrologue(p, kLookupTypeRequest, request.request_id);
  p[12] = request.count;
  for (size_t i = 0; i < request.count; ++i)
    Store64(p + kRequestHeaderSize + 8 * i, request.ids[i]);
  return size;
}

// ---- forward header ----

bool HasForwardHeader(std::span<const uint8_t> b) {
  return b.size() >= 2 && b[0] == kLookupMagic0 && b[1] == kForwardMagic1;
}

ForwardHeader ForwardHeader::V6(const std::array<uint8_t, 16>& address, uint16_t port,
                                uint8_t flags) {
  ForwardHeader h;
  h.ipv6 = true;
  h.client_ip6 = address;
  h.client_port = port;
  h.flags = flags;
  return h;
}

std::string_view ForwardFaultText(ForwardFault fault) {
  switch (fault) {
    case ForwardFault::kNone:
      return "valid";
    case ForwardFault::kTruncated:
      return "truncated";
    case ForwardFault::kBadMagic:
      return "bad magic (expected 'VF')";
    case ForwardFault::kUnsupportedVersion:
      return "unsupported version";
    case ForwardFault::kReservedNotZero:
      return "reserved field is not zero";
    case ForwardFault::kZeroAddress:
      return "client address unspecified";
    case ForwardFault::kMappedIpv4:
      return "IPv4-mapped client address in the IPv6 form (version 2); send the IPv4 form";
    case ForwardFault::kZeroPort:
      return "client port 0";
  }
  return "unknown fault";
}

namespace {

// The bytes of the form that bytes[2] names (the IPv4 form when too short to tell).
size_t FormSize(std::span<const uint8_t> b) {
  return b.size() > 2 && b[2] == kForwardVersionV6 ? kForwardHeaderV6Size : kForwardHeaderSize;
}

bool IsMappedIpv4(const std::array<uint8_t, 16>& a) {
  for (size_t i = 0; i < 10; ++i) {
    if (a[i] != 0) return false;
  }
  return a[10] == 0xff && a[11] == 0xff;
}

}  // namespace

ForwardCheck CheckForwardHeader(std::span<const uint8_t> b) {
  ForwardCheck c;
  auto fail = [&c](ForwardFault f) {
    c.fault = f;
    return c;
  };
  if (b.size() < FormSize(b)) return fail(ForwardFault::kTruncated);
  if (!HasForwardHeader(b)) return fail(ForwardFault::kBadMagic);
  ForwardHeader& h = c.header;
  h.flags = b[3];
  if (b[2] == kLookupVersion) {
    if (Load16(b.data() + 10) != 0) return fail(ForwardFault::kReservedNotZero);
    h.client_ip = Load32(b.data() + 4);
    h.client_port = Load16(b.data() + 8);
    if (h.client_ip == 0) return fail(ForwardFault::kZeroAddress);
  } else if (b[2] == kForwardVersionV6) {
    if (Load16(b.data() + 22) != 0) return fail(ForwardFault::kReservedNotZero);
    h.ipv6 = true;
    std::copy(b.begin() + 4, b.begin() + 20, h.client_ip6.begin());
    h.client_port = Load16(b.data() + 20);
    const bool zero =
        std::all_of(h.client_ip6.begin(), h.client_ip6.end(), [](uint8_t x) { return x == 0; });
    if (zero) return fail(ForwardFault::kZeroAddress);
    if (IsMappedIpv4(h.client_ip6)) return fail(ForwardFault::kMappedIpv4);
  } else {
    return fail(ForwardFault::kUnsupportedVersion);
  }
  if (h.client_port == 0) return fail(ForwardFault::kZeroPort);
  return c;
}

Result<ForwardHeader> DecodeForwardHeader(std::span<const uint8_t> b) {
  const ForwardCheck c = CheckForwardHeader(b);
  const std::string prefix = "forward header: ";
  switch (c.fault) {
    case ForwardFault::kNone:
      return c.header;
    case ForwardFault::kTruncated:
      return InvalidArgument(prefix + "truncated (" + std::to_string(b.size()) + " of " +
                             std::to_string(FormSize(b)) + " bytes)");
    case ForwardFault::kUnsupportedVersion:
      return InvalidArgument(prefix + "unsupported version " + std::to_string(b[2]) +
                             " (this build speaks version 1, IPv4, and 2, IPv6)");
    case ForwardFault::kZeroAddress:
      return InvalidArgument(
          prefix + (b[2] == kLookupVersion ? "client address 0.0.0.0" : "client address ::"));
    default:
      return InvalidArgument(prefix + std::string(ForwardFaultText(c.fault)));
  }
}

void EncodeForwardHeader(const ForwardHeader& h, std::span<uint8_t, kForwardHeaderSize> out) {
  uint8_t* p = out.data();
  p[0] = kLookupMagic0;
  p[1] = kForwardMagic1;
  p[2] = kLookupVersion;
  p[3] = h.flags;
  Store32(p + 4, h.client_ip);
  Store16(p + 8, h.client_port);
  Store16(p + 10, 0);
}

size_t WriteForwardHeader(const ForwardHeader& h, std::span<uint8_t> out) {
  if (out.size() < h.size()) return 0;
  if (!h.ipv6) {
    EncodeForwardHeader(h, out.first<kForwardHeaderSize>());
    return kForwardHeaderSize;
  }
  uint8_t* p = out.data();
  p[0] = kLookupMagic0;
  p[1] = kForwardMagic1;
  p[2] = kForwardVersionV6;
  p[3] = h.flags;
  std::copy(h.client_ip6.begin(), h.client_ip6.end(), p + 4);
  Store16(p + 20, h.client_port);
  Store16(p + 22, 0);
  return kForwardHeaderV6Size;
}

// ---- response ----

ResponseWriter::ResponseWriter(std::span<uint8_t> out, uint64_t request_id, LookupStatus status)
    : out_(out) {
  if (out_.size() < kResponseHeaderSize) {
    failed_ = true;
    return;
  }
  StoreLookupPrologue(out_.data(), kLookupTypeResponse, request_id);
  out_[12] = static_cast<uint8_t>(status);
  out_[13] = 0;
  size_ = kResponseHeaderSize;
}

Status ResponseWriter::Add(uint64_t id, bool found, std::string_view node) {
  if (failed_) return FailedPrecondition("lookup response: writer already failed");
  Status st;
  if (out_[12] != static_cast<uint8_t>(LookupStatus::kOk)) {
    st = InvalidArgument("lookup response: answers on a non-ok status");
  } else if (count_ >= kMaxLookupIds) {
    st = InvalidArgument("lookup response: more than 10 answers");
  } else if (node.size() > kMaxNodeLen) {
    st = InvalidArgument("lookup response: node name of " + std::to_string(node.size()) +
                         " bytes exceeds the limit of 64");
  } else if (!found && !node.empty()) {
    st = InvalidArgument("lookup response: node name on a not-found answer");
  } else if (out_.size() - size_ < kAnswerHeaderSize + node.size()) {
    st = ResourceExhausted("lookup response: output buffer too small");
  }
  if (!st.ok()) {
    failed_ = true;
    return st;
  }
  uint8_t* p = out_.data() + size_;
  Store64(p, id);
  p[8] = found ? 1 : 0;
  p[9] = static_cast<uint8_t>(node.size());
  if (!node.empty()) std::memcpy(p + kAnswerHeaderSize, node.data(), node.size());
  size_ += kAnswerHeaderSize + node.size();
  out_[13] = ++count_;
  return Status::Ok();
}

size_t ResponseWriter::Finish() { return failed_ ? 0 : size_; }

Result<LookupResponse> DecodeResponse(std::span<const uint8_t> b) {
  VSC_RETURN_IF_ERROR(
      CheckPrologue(b, kResponseHeaderSize, kLookupTypeResponse, "lookup response"));
  LookupResponse r;
  r.request_id = Load64(b.data() + 4);
  if (b[12] > static_cast<uint8_t>(LookupStatus::kInternal)) {
    return InvalidArgument("lookup response: unknown status " + std::to_string(b[12]));
  }
  r.status = static_cast<LookupStatus>(b[12]);
  const size_t count = b[13];
  if (count > kMaxLookupIds) {
    return InvalidArgument("lookup response: count " + std::to_string(count) +
                           " exceeds the limit of 10 answers");
  }
  if (count > 0 && r.status != LookupStatus::kOk) {
    return InvalidArgument("lookup response: answers on a non-ok status");
  }
  r.answers.reserve(count);
  size_t pos = kResponseHeaderSize;
  for (size_t i = 0; i < count; ++i) {
    if (b.size() - pos < kAnswerHeaderSize) {
      return InvalidArgument("lookup response: truncated answer " + std::to_string(i));
    }
    const uint8_t* p = b.data() + pos;
    LookupAnswer a;
    a.id = Load64(p);
    if (p[8] > 1) {
      return InvalidArgument("lookup response: found flag " + std::to_string(p[8]) +
                             " is neither 0 nor 1");
    }
    a.found = p[8] == 1;
    const size_t len = p[9];
    if (len > kMaxNodeLen) {
      return InvalidArgument("lookup response: node_len " + std::to_string(len) +
                             " exceeds the limit of 64");
    }
    if (!a.found && len != 0) {
      return InvalidArgument("lookup response: node name on a not-found answer");
    }
    if (b.size() - pos - kAnswerHeaderSize < len) {
      return InvalidArgument("lookup response: truncated node name in answer " + std::to_string(i));
    }
    a.node.assign(reinterpret_cast<const char*>(p + kAnswerHeaderSize), len);
    pos += kAnswerHeaderSize + len;
    r.answers.push_back(std::move(a));
  }
  if (pos != b.size()) {
    return InvalidArgument("lookup response: " + std::to_string(b.size() - pos) +
                           " trailing bytes after " + std::to_string(count) + " answers");
  }
  return r;
}

size_t EncodeResponse(const LookupResponse& response, std::span<uint8_t> out) {
  ResponseWriter w(out, response.request_id, response.status);
  for (const LookupAnswer& a : response.answers) {
    if (!w.Add(a.id, a.found, a.node).ok()) return 0;
  }
  return w.Finish();
}

size_t EncodeErrorResponse(uint64_t request_id, LookupStatus status, std::span<uint8_t> out) {
  ResponseWriter w(out, request_id, status);
  return w.Finish();
}

}  // namespace vsc::proto

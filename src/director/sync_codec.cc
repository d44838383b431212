#include "director/sync_codec.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <string>

namespace vsc::director {
namespace {

std::string AddressBytes(const vservice::IpAddress& a) {
  return std::string(reinterpret_cast<const char*>(a.bytes().data()), a.size());
}

std::optional<vservice::IpAddress> AddressOf(const std::string& bytes) {
  if (bytes.size() == 4) {
    uint32_t v = 0;
    for (unsigned char c : bytes) v = (v << 8) | c;
    return vservice::IpAddress::V4(v);
  }
  if (bytes.size() != 16) return std::nullopt;
  std::array<uint8_t, 16> b{};
  std::memcpy(b.data(), bytes.data(), b.size());
  return vservice::IpAddress::V6(b);
}

std::optional<uint16_t> PortOf(uint32_t port) {
  if (port > 0xFFFF) return std::nullopt;
  return static_cast<uint16_t>(port);
}

void Encode(const SyncRecord& r, proto::SyncRecord& out) {
  out.set_kind(static_cast<uint32_t>(r.kind));
  out.set_protocol(static_cast<uint32_t>(r.service.proto));
  out.set_vip(AddressBytes(r.service.vip));
  out.set_vport(r.service.port);
  out.set_client(AddressBytes(r.client.addr));  // a template's network: port 0
  out.set_client_port(r.client.port);
  out.set_dest(AddressBytes(r.dest.addr));
  out.set_dest_port(r.dest.port);
  out.set_expires_in_ms(static_cast<uint32_t>(std::min(r.expires_in, kMaxSyncLife).count()));
}

std::optional<SyncRecord> Decode(const proto::SyncRecord& in) {
  SyncRecord r;
  if (in.kind() != 1 && in.kind() != 2) return std::nullopt;
  r.kind = static_cast<SyncKind>(in.kind());
  if (in.protocol() != 6 && in.protocol() != 17) return std::nullopt;
  r.service.proto = static_cast<vservice::Proto>(in.protocol());
  auto vip = AddressOf(in.vip());
  auto vport = PortOf(in.vport());
  auto dest = AddressOf(in.dest());
  auto dest_port = PortOf(in.dest_port());
  if (!vip || !vport || !dest || !dest_port) return std::nullopt;
  r.service.vip = *vip;
  r.service.port = *vport;
  r.dest = {*dest, *dest_port};
  auto client = AddressOf(in.client());
  auto client_port = PortOf(in.client_port());
  if (!client || !client_port) return std::nullopt;
  if (r.kind == SyncKind::kTemplate && *client_port != 0) return std::nullopt;
  r.client = {*client, *client_port};
  r.expires_in = std::chrono::milliseconds(in.expires_in_ms());
  if (r.expires_in <= std::chrono::milliseconds::zero() || r.expires_in > kMaxSyncLife) {
    return std::nullopt;
  }
  return r;
}

}  // namespace

std::vector<proto::Message> PackSync(std::span<const SyncRecord> records) {
  std::vector<proto::Message> out;
  size_t bytes = 0;
  for (const SyncRecord& r : records) {
    proto::SyncRecord encoded;
    Encode(r, encoded);
    // A repeated message field costs its tag, its length varint and its bytes.
    const size_t size = encoded.ByteSizeLong();
    const size_t cost = 1 + (size < 128 ? 1 : 2) + size;
    if (out.empty() || bytes + cost > kMaxSyncBatchBytes) {
      out.emplace_back();
      out.back().mutable_sync_batch();
      bytes = 0;
    }
    *out.back().mutable_sync_batch()->add_records() = std::move(encoded);
    bytes += cost;
  }
  return out;
}

UnpackedSync UnpackSync(const proto::SyncBatch& batch) {
  UnpackedSync out;
  out.records.reserve(batch.records_size());
  for (const proto::SyncRecord& in : batch.records()) {
    if (auto r = Decode(in)) {
      out.records.push_back(*r);
    } else {
      ++out.malformed;
    }
  }
  return out;
}

}  // namespace vsc::director

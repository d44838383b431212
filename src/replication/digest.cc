#include "replication/digest.h"

#include <openssl/sha.h>

#include <algorithm>

#include "replication/entry_codec.h"

namespace vsc::replication {

std::string DigestInput(const Digest& previous, const Entry& entry, const EntryResult& result) {
  std::string in;
  in.reserve(64 + PayloadBytes(entry) + 16 * entry.statements.size() + result.checksum.size());
  in.append(reinterpret_cast<const char*>(previous.data()), previous.size());
  PutU64(in, entry.seq);
  PutU64(in, entry.epoch);
  PutI64(in, entry.ts_micros);
  PutU8(in, static_cast<uint8_t>(entry.kind));
  PutStatements(in, entry.statements);
  PutI32(in, result.code);
  PutI64(in, result.rows_changed);
  PutBytes(in, result.checksum);
  // Keyed entries only (issue 11), so the chain of every unkeyed history is unchanged: replicas
  // must agree on the key and on whether it was a duplicate (and of which seq).
  if (!entry.idempotency_key.empty()) {
    PutBytes(in, entry.idempotency_key);
    PutU64(in, entry.idempotency_window);
    PutU64(in, result.duplicate_of);
  }
  return in;
}

Digest NextDigest(const Digest& previous, const Entry& entry, const EntryResult& result) {
  const std::string in = DigestInput(previous, entry, result);
  Digest d;
  SHA256(reinterpret_cast<const unsigned char*>(in.data()), in.size(), d.data());
  return d;
}

std::string DigestHex(const Digest& d) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(d.size() * 2);
  for (uint8_t b : d) {
    out.push_back(kHex[b >> 4]);
    out.push_back(kHex[b & 15]);
  }
  return out;
}

Digest ZeroDigest() { return Digest{}; }

Result<Digest> DigestFromBytes(std::string_view bytes) {
  Digest d;
  if (bytes.size() != d.size()) {
    return InvalidArgument("digest must be 32 bytes, got " + std::to_string(bytes.size()));
  }
  std::copy(bytes.begin(), bytes.end(), d.begin());
  return d;
}

}  // namespace vsc::replication

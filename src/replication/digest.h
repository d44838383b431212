// The digest chain (DESIGN §7): d_k = SHA-256(d_{k-1} ‖ seq ‖ epoch ‖ ts ‖ kind ‖ statements ‖
// params ‖ result code ‖ rows changed ‖ checksum [‖ idempotency key ‖ window ‖ duplicate_of, for
// keyed entries only]). The error text is not hashed: the code is what
// replicas must agree on, and SQLite's wording is not part of the contract. Equal digests at the
// same seq prove that two replicas applied the same stream with the same outcomes. The byte layout
// hashed is fixed (big-endian integers, length-prefixed strings) and documented in
// docs/protocol.md. Pure.
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"
#include "replication/entry.h"

namespace vsc::replication {

Digest NextDigest(const Digest& previous, const Entry& entry, const EntryResult& result);
std::string DigestHex(const Digest& d);
Digest ZeroDigest();

// The exact bytes NextDigest hashes (for the documented test vector and for debugging).
std::string DigestInput(const Digest& previous, const Entry& entry, const EntryResult& result);
// A digest received as raw bytes (ReplicaAck.digest): InvalidArgument unless exactly 32 bytes.
Result<Digest> DigestFromBytes(std::string_view bytes);

}  // namespace vsc::replication

// The digest chain (DESIGN §7): d_k = SHA-256(d_{k-1} ‖ seq ‖ statements ‖ params ‖ result code ‖
// rows changed). Equal digests at the same seq prove that two replicas applied the same stream
// with the same outcomes. The byte layout hashed is fixed (big-endian integers, length-prefixed
// strings) and documented in docs/protocol.md. Pure.
#pragma once

#include <string>

#include "replication/entry.h"

namespace vsc::replication {

Digest NextDigest(const Digest& previous, const Entry& entry, const EntryResult& result);
std::string DigestHex(const Digest& d);
Digest ZeroDigest();

}  // namespace vsc::replication

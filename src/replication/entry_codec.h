// The byte encoding shared by the digest chain (digest.h), the log payload (log.h) and the
// logical checksum (replica_store.h): big-endian integers, u32-length-prefixed byte strings.
// Documented byte for byte in docs/protocol.md "Digest chain". Pure.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "replication/entry.h"

namespace vsc::replication {

void PutU8(std::string& out, uint8_t v);
void PutU32(std::string& out, uint32_t v);
void PutU64(std::string& out, uint64_t v);
inline void PutI32(std::string& out, int32_t v) { PutU32(out, static_cast<uint32_t>(v)); }
inline void PutI64(std::string& out, int64_t v) { PutU64(out, static_cast<uint64_t>(v)); }
// u32 length, then the bytes.
void PutBytes(std::string& out, std::string_view bytes);
// u8 kind (0 null, 1 int, 2 real, 3 text, 4 blob), then: int -> i64; real -> the IEEE-754
// bits as u64; text/blob -> PutBytes; null -> nothing.
void PutValue(std::string& out, const Value& value);
// u32 count, then per statement: PutBytes(sql), u32 param count, PutValue per param.
void PutStatements(std::string& out, const std::vector<Statement>& statements);

std::string EncodeStatements(const std::vector<Statement>& statements);
// The inverse of PutStatements over the whole input. DataLoss when the bytes are truncated,
// have trailing garbage or an unknown value kind.
Result<std::vector<Statement>> DecodeStatements(std::string_view bytes);

}  // namespace vsc::replication

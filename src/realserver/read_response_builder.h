// ReadResponseBuilder: collects the rows of a SQL read into a ReadResponse that is guaranteed to
// fit, once sealed in an envelope (envelope.h), in one UDP datagram of `max_datagram` bytes.
// The size is tracked exactly as rows are added (protobuf's encoded sizes), so the check costs
// no re-serialization; once a row does not fit the builder stops keeping rows and only counts
// them (up to `count_cap`), so the refusal can say how big the result was.
//
// Pure; not thread safe (one per request).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "proto/control.pb.h"

namespace vsc::realserver {

// An answer datagram never exceeds this (an IPv4 UDP datagram can carry 65,507 bytes; the margin
// leaves room for tunnels and keeps clear of the kernel's limits).
inline constexpr size_t kMaxSqlDatagram = 60 * 1024;
// Rows counted past the limit before giving up counting ("more than N rows").
inline constexpr uint64_t kOverflowCountCap = 100'000;

class ReadResponseBuilder {
 public:
  // `sender` is the envelope sender the answer will be sealed with (the replica id).
  ReadResponseBuilder(uint64_t request_id, uint64_t applied_seq, std::string replica_id,
                      size_t sender_bytes, size_t max_datagram = kMaxSqlDatagram,
                      uint64_t count_cap = kOverflowCountCap);

  void SetColumns(std::vector<std::string> columns);
  // Adds one row. Returns false when the row did not fit (the result is then too large and
  // further rows are only counted); false also once the count cap is reached, so the caller
  // can stop stepping.
  bool AddRow(proto::SqlRow row);
  bool overflowed() const { return overflowed_; }
  // Rows seen (kept or counted).
  uint64_t rows_seen() const { return rows_seen_; }
  bool count_capped() const { return rows_seen_ >= count_cap_; }

  // The answer: the rows when everything fit, else ok=false with "result too large for one
  // datagram (N rows); narrow the query or use LIMIT".
  proto::ReadResponse Finish();

  // An error answer (also bounded: a very long SQLite message is cut).
  static proto::ReadResponse Error(uint64_t request_id, uint64_t applied_seq,
                                   const std::string& replica_id, std::string error);

 private:
  // Bytes of the sealed envelope for the current response plus `extra` encoded row bytes.
  size_t SealedSize(size_t rows_bytes) const;

  proto::ReadResponse response_;
  size_t sender_bytes_;
  size_t max_datagram_;
  uint64_t count_cap_;
  size_t base_bytes_ = 0;  // the response without rows
  size_t rows_bytes_ = 0;  // the rows' field bytes (tag + length + row)
  uint64_t rows_seen_ = 0;
  bool overflowed_ = false;
};

// Size of a sealed envelope (envelope.h) whose sender has `sender_bytes` bytes and whose body is
// a Message carrying a ReadResponse of `response_bytes` bytes.
size_t SealedReadResponseSize(size_t sender_bytes, size_t response_bytes);

}  // namespace vsc::realserver

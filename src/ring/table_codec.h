// The ring route table on the wire (docs/protocol.md "Ring route table"): the ring's version and
// every member — id, name, endpoint — in ascending id order, big endian, so a client or a ring
// node can prefetch the table and route by itself (DESIGN.md §8).
//
//   header  'V' 'R' | u8 format=1 | u8 reserved=0 | u64 ring version | u32 count (<= 16384)
//   member  u64 id | u8 name_len (1..64) | u8 host_len (1..253) | u16 port (1..65535)
//           | name bytes | host bytes
//
// TableDecoder is sans-I/O and incremental: feed the bytes as they arrive, in pieces of any
// size; it validates each member as soon as its bytes are in and buffers at most one member.
// It is canonical: a table it accepts re-encodes to exactly the same bytes, so a corrupted
// table is refused or decodes to visibly different values. Besides bounds it refuses ids that
// are not strictly ascending and an id that is not NodeId(name) (a corrupted or foreign
// table). Errors are InvalidArgument and start with "ring table: ". Not thread safe; one
// decoder per stream. The encoder is pure.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "common/status.h"
#include "ring/ring.h"

namespace vsc::ring {

inline constexpr uint8_t kTableMagic0 = 'V';
inline constexpr uint8_t kTableMagic1 = 'R';
inline constexpr uint8_t kTableFormat = 1;
inline constexpr size_t kTableHeaderSize = 16;
inline constexpr size_t kMemberHeaderSize = 12;
// The largest table: kMaxMembers members with the longest names and hosts (about 5.4 MB). A
// typical member ("rs-17" on an IPv4 address) takes under 30 bytes.
inline constexpr size_t kMaxTableSize =
    kTableHeaderSize + kMaxMembers * (kMemberHeaderSize + kMaxNameLen + kMaxHostLen);

size_t EncodedTableSize(const Ring& ring);
std::vector<uint8_t> EncodeTable(const Ring& ring);

class TableDecoder {
 public:
  TableDecoder() = default;

  // Takes bytes of one table and returns how many it used: all of them while the table is
  // incomplete, and up to its last byte once it is complete (what follows is the caller's).
  // An error is final: every later call returns it again.
  Result<size_t> Feed(std::span<const uint8_t> bytes);

  bool done() const { return state_ == State::kDone; }
  // Bytes still missing from the part being read (header, member header, member strings): the
  // table needs at least this many more. 0 once done.
  size_t missing() const { return done() ? 0 : need_ - item_.size(); }
  // The decoded ring, once done(); moves it out.
  Ring TakeRing();

 private:
  enum class State { kHeader, kMemberHeader, kMemberStrings, kDone, kFailed };
  Status Step();
  Status ReadHeader();
  Status ReadMemberHeader();
  Status ReadMemberStrings();
  // Reads the next member's header, or completes the table after the last member.
  void NextMember();

  State state_ = State::kHeader;
  size_t need_ = kTableHeaderSize;  // size of the part being read
  std::vector<uint8_t> item_;       // its bytes so far
  Status failure_;

  uint64_t version_ = 0;
  size_t count_ = 0;
  // The member being read: its header fields.
  RingId id_ = 0;
  size_t name_len_ = 0;
  uint16_t port_ = 0;
  std::vector<Member> members_;
};

// Decodes exactly one complete table (no trailing bytes).
Result<Ring> DecodeTable(std::span<const uint8_t> bytes);

}  // namespace vsc::ring

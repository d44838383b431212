#include "ring/table_codec.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "common/big_endian.h"

namespace vsc::ring {
namespace {

Status Refuse(std::string what) { return InvalidArgument("ring table: " + std::move(what)); }

}  // namespace

size_t EncodedTableSize(const Ring& ring) {
  size_t size = kTableHeaderSize;
  for (const Member& m : ring.members()) {
    size += kMemberHeaderSize + m.name.size() + m.endpoint.host.size();
  }
  return size;
}

std::vector<uint8_t> EncodeTable(const Ring& ring) {
  std::vector<uint8_t> out;
  out.reserve(EncodedTableSize(ring));
  out.push_back(kTableMagic0);
  out.push_back(kTableMagic1);
  out.push_back(kTableFormat);
  out.push_back(0);
  PutBigEndian(out, ring.version(), 8);
  PutBigEndian(out, ring.size(), 4);
  for (const Member& m : ring.members()) {
    PutBigEndian(out, m.id, 8);
    out.push_back(static_cast<uint8_t>(m.name.size()));
    out.push_back(static_cast<uint8_t>(m.endpoint.host.size()));
    PutBigEndian(out, m.endpoint.port, 2);
    out.insert(out.end(), m.name.begin(), m.name.end());
    out.insert(out.end(), m.endpoint.host.begin(), m.endpoint.host.end());
  }
  return out;
}

Result<size_t> TableDecoder::Feed(std::span<const uint8_t> bytes) {
  if (state_ == State::kFailed) return failure_;
  size_t used = 0;
  while (state_ != State::kDone && used < bytes.size()) {
    const size_t take = std::min(need_ - item_.size(), bytes.size() - used);
    item_.insert(item_.end(), bytes.begin() + used, bytes.begin() + used + take);
    used += take;
    if (item_.size() < need_) break;
    if (Status st = Step(); !st.ok()) {
      state_ = State::kFailed;
      failure_ = st;
      return st;
    }
  }
  return used;
}

Status TableDecoder::Step() {
  Status st;
  switch (state_) {
    case State::kHeader:
      st = ReadHeader();
      break;
    case State::kMemberHeader:
      st = ReadMemberHeader();
      break;
    case State::kMemberStrings:
      st = ReadMemberStrings();
      break;
    case State::kDone:
    case State::kFailed:
      break;
  }
  item_.clear();
  return st;
}

Status TableDecoder::ReadHeader() {
  const uint8_t* p = item_.data();
  if (p[0] != kTableMagic0 || p[1] != kTableMagic1) return Refuse("bad magic (expected 'VR')");
  if (p[2] != kTableFormat) {
    return Refuse("unsupported format " + std::to_string(p[2]) + " (this build reads format 1)");
  }
  if (p[3] != 0) return Refuse("reserved byte is " + std::to_string(p[3]) + ", not 0");
  version_ = GetBigEndian(p + 4, 8);
  count_ = GetBigEndian(p + 12, 4);
  if (count_ > kMaxMembers) {
    return Refuse("count " + std::to_string(count_) + " exceeds the limit of " +
                  std::to_string(kMaxMembers) + " members");
  }
  members_.reserve(count_);
  NextMember();
  return Status::Ok();
}

Status TableDecoder::ReadMemberHeader() {
  const uint8_t* p = item_.data();
  const std::string which = "member " + std::to_string(members_.size());
  id_ = GetBigEndian(p, 8);
  name_len_ = p[8];
  const size_t host_len = p[9];
  port_ = static_cast<uint16_t>(GetBigEndian(p + 10, 2));
  if (!members_.empty() && id_ <= members_.back().id) {
    return Refuse(which + ": id " + IdHex(id_) + " does not follow " + IdHex(members_.back().id) +
                  " (ids must be strictly ascending)");
  }
  if (name_len_ == 0 || name_len_ > kMaxNameLen) {
    return Refuse(which + ": name_len " + std::to_string(name_len_) + " is not 1 to 64");
  }
  if (host_len == 0 || host_len > kMaxHostLen) {
    return Refuse(which + ": host_len " + std::to_string(host_len) + " is not 1 to 253");
  }
  if (port_ == 0) return Refuse(which + ": port 0");
  state_ = State::kMemberStrings;
  need_ = name_len_ + host_len;
  return Status::Ok();
}

Status TableDecoder::ReadMemberStrings() {
  const char* p = reinterpret_cast<const char*>(item_.data());
  Member m{std::string(p, name_len_), id_,
           Endpoint{std::string(p + name_len_, need_ - name_len_), port_}};
  if (const RingId want = NodeId(m.name); want != m.id) {
    return Refuse("member " + std::to_string(members_.size()) + " \"" + m.name + "\" has id " +
                  IdHex(m.id) + " but its name hashes to " + IdHex(want) +
                  "; the table is corrupt or from a build with another id rule");
  }
  members_.push_back(std::move(m));
  NextMember();
  return Status::Ok();
}

void TableDecoder::NextMember() {
  if (members_.size() == count_) {
    state_ = State::kDone;
    need_ = 0;
  } else {
    state_ = State::kMemberHeader;
    need_ = kMemberHeaderSize;
  }
}

Ring TableDecoder::TakeRing() {
  if (state_ != State::kDone) {
    std::fprintf(stderr, "vsc: TableDecoder::TakeRing before the table was complete\n");
    std::abort();
  }
  // Ascending unique ids, each the hash of its name, with names and hosts in bounds: everything
  // Ring::Build would establish, so the members are used as they are.
  return Ring(version_, std::move(members_));
}

Result<Ring> DecodeTable(std::span<const uint8_t> bytes) {
  TableDecoder decoder;
  VSC_ASSIGN_OR_RETURN(const size_t used, decoder.Feed(bytes));
  if (!decoder.done()) {
    return Refuse("truncated after " + std::to_string(bytes.size()) + " bytes (at least " +
                  std::to_string(decoder.missing()) + " more needed)");
  }
  if (used != bytes.size()) {
    return Refuse(std::to_string(bytes.size() - used) + " trailing bytes after the table");
  }
  return decoder.TakeRing();
}

}  // namespace vsc::ring

// The ring: an immutable, versioned value built from membership (DESIGN.md §8). Members are
// sorted by id; member i owns the arc (id of member i-1, id of member i], wrapping around 0, so
// successor(k) — the first member at or after k — owns key k.
//
// A ring is a plain value: copy or share it (`std::shared_ptr<const Ring>`) and read it from any
// thread. Build refuses what would make ownership ambiguous (duplicate names, two names with
// the same id) and names the member at fault. Successor and predecessor queries on an empty ring
// are a bug (they abort; callers check empty() first); its successor lists are empty.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "ring/id.h"

namespace vsc::ring {

inline constexpr size_t kMaxNameLen = 64;   // as a node name in a lookup answer
inline constexpr size_t kMaxHostLen = 253;  // a DNS name
inline constexpr size_t kMaxMembers = 16384;
inline constexpr size_t kReplicas = 3;  // r: successor-list length (DESIGN.md §8)

struct Endpoint {
  std::string host;
  uint16_t port = 0;
  bool operator==(const Endpoint&) const = default;
};

// One node as membership configures it: the name fixes its place on the ring.
struct NodeSpec {
  std::string name;
  Endpoint endpoint;
};

struct Member {
  std::string name;
  RingId id = 0;  // NodeId(name), always
  Endpoint endpoint;
  bool operator==(const Member&) const = default;
};

class TableDecoder;

class Ring {
 public:
  Ring() = default;  // the empty ring, version 0

  // Hashes every name and sorts by id. Refuses an empty or over-long name or host, port 0,
  // more than kMaxMembers nodes, a name given twice, and two names whose ids collide.
  static Result<Ring> Build(uint64_t version, std::vector<NodeSpec> nodes);

  uint64_t version() const { return version_; }
  size_t size() const { return members_.size(); }
  bool empty() const { return members_.empty(); }
  std::span<const Member> members() const { return members_; }
  const Member& member(size_t index) const { return members_[index]; }
  // Index of the member with this name, or size() when there is none.
  size_t IndexOf(std::string_view name) const;

  // Indices (into members()) of successor(k), the first member at or after k clockwise, and of
  // predecessor(k), the last member strictly before k. O(log N).
  size_t SuccessorIndex(RingId k) const;
  size_t PredecessorIndex(RingId k) const;
  const Member& Successor(RingId k) const { return members_[SuccessorIndex(k)]; }
  const Member& Predecessor(RingId k) const { return members_[PredecessorIndex(k)]; }
  // The member that owns `key`: Successor(KeyId(key)).
  const Member& Owner(std::string_view key) const { return Successor(KeyId(key)); }
  // The first min(r, size()) distinct members clockwise from successor(k), owner first: where
  // the key and its copies live. Node n's own successor list is SuccessorList(n.id + 1, r); on a
  // ring of at most r members it ends with n itself.
  std::vector<size_t> SuccessorList(RingId k, size_t r = kReplicas) const;
  // The share of the circle member `index` owns, (predecessor, member], in [0, 1]; 1 alone.
  double ArcShare(size_t index) const;

  bool operator==(const Ring&) const = default;

 private:
  friend class TableDecoder;  // builds a ring from members it has already validated
  Ring(uint64_t version, std::vector<Member> members)
      : version_(version), members_(std::move(members)) {}
  // First index with id >= k, without wrapping (size() when k is past the largest id).
  size_t FirstAtOrAfter(RingId k) const;
  void CheckNotEmpty() const;

  uint64_t version_ = 0;
  std::vector<Member> members_;  // strictly ascending id
};

}  // namespace vsc::ring

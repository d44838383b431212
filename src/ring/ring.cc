#include "ring/ring.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace vsc::ring {
namespace {

Status CheckSpec(const NodeSpec& n) {
  if (n.name.empty()) return InvalidArgument("ring: a node has an empty name; name every node");
  if (n.name.size() > kMaxNameLen) {
    return InvalidArgument("ring: node name \"" + n.name.substr(0, 16) + "...\" is " +
                           std::to_string(n.name.size()) + " bytes, over the limit of " +
                           std::to_string(kMaxNameLen) + "; use a shorter name");
  }
  if (n.endpoint.host.empty() || n.endpoint.host.size() > kMaxHostLen) {
    return InvalidArgument("ring: node \"" + n.name + "\" has a host of " +
                           std::to_string(n.endpoint.host.size()) + " bytes; give 1 to " +
                           std::to_string(kMaxHostLen));
  }
  if (n.endpoint.port == 0) {
    return InvalidArgument("ring: node \"" + n.name + "\" has port 0; give the port it listens on");
  }
  return Status::Ok();
}

}  // namespace

Result<Ring> Ring::Build(uint64_t version, std::vector<NodeSpec> nodes) {
  if (nodes.size() > kMaxMembers) {
    return InvalidArgument("ring: " + std::to_string(nodes.size()) + " nodes, over the limit of " +
                           std::to_string(kMaxMembers));
  }
  std::vector<Member> members;
  members.reserve(nodes.size());
  for (NodeSpec& n : nodes) {
    VSC_RETURN_IF_ERROR(CheckSpec(n));
    const RingId id = NodeId(n.name);
    members.push_back(Member{std::move(n.name), id, std::move(n.endpoint)});
  }
  std::sort(members.begin(), members.end(),
            [](const Member& a, const Member& b) { return a.id < b.id; });
  // Equal names hash to equal ids, so both kinds of duplicate sit next to each other.
  for (size_t i = 1; i < members.size(); ++i) {
    const Member& a = members[i - 1];
    const Member& b = members[i];
    if (a.id != b.id) continue;
    if (a.name == b.name) {
      return InvalidArgument("ring: node \"" + a.name +
                             "\" is listed twice; each node needs a unique name");
    }
    return InvalidArgument("ring: nodes \"" + a.name + "\" and \"" + b.name +
                           "\" hash to the same id " + IdHex(a.id) + "; rename one of them");
  }
  return Ring(version, std::move(members));
}

size_t Ring::IndexOf(std::string_view name) const {
  if (name.empty() || name.size() > kMaxNameLen) return members_.size();
  const size_t i = FirstAtOrAfter(NodeId(name));
  return i < members_.size() && members_[i].name == name ? i : members_.size();
}

size_t Ring::FirstAtOrAfter(RingId k) const {
  return std::lower_bound(members_.begin(), members_.end(), k,
                          [](const Member& m, RingId id) { return m.id < id; }) -
         members_.begin();
}

void Ring::CheckNotEmpty() const {
  if (members_.empty()) {
    std::fprintf(stderr, "vsc: ring query on an empty ring (a caller did not check empty())\n");
    std::abort();
  }
}

size_t Ring::SuccessorIndex(RingId k) const {
  CheckNotEmpty();
  const size_t i = FirstAtOrAfter(k);
  return i == members_.size() ? 0 : i;  // past the largest id: wrap to the smallest
}

size_t Ring::PredecessorIndex(RingId k) const {
  const size_t s = SuccessorIndex(k);
  return s == 0 ? members_.size() - 1 : s - 1;
}

std::vector<size_t> Ring::SuccessorList(RingId k, size_t r) const {
  const size_t n = std::min(r, members_.size());
  std::vector<size_t> out;
  out.reserve(n);
  const size_t first = n == 0 ? 0 : SuccessorIndex(k);
  for (size_t i = 0; i < n; ++i) out.push_back((first + i) % members_.size());
  return out;
}

double Ring::ArcShare(size_t index) const {
  if (members_.size() == 1) return 1.0;
  const RingId prev = members_[(index + members_.size() - 1) % members_.size()].id;
  return static_cast<double>(Distance(prev, members_[index].id)) / 18446744073709551616.0;
}

}  // namespace vsc::ring

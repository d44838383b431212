#include "ring/handoff.h"

#include <algorithm>

namespace vsc::ring {
namespace {

// Every member id of either ring, ascending, once each. No ring changes owner strictly inside
// two consecutive boundaries, so each elementary arc (b[j-1], b[j]] has one label per ring,
// the label of its end point.
std::vector<RingId> Boundaries(const Ring& a, const Ring& b) {
  std::vector<RingId> ids;
  ids.reserve(a.size() + b.size());
  for (const Member& m : a.members()) ids.push_back(m.id);
  for (const Member& m : b.members()) ids.push_back(m.id);
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

// Appends `c`, merging it into the previous change when the two are adjacent and equal.
template <typename Label>
void AppendMerged(std::vector<ArcChange<Label>>& out, ArcChange<Label> c) {
  if (!out.empty() && out.back().arc.end == c.arc.start && out.back().from == c.from &&
      out.back().to == c.to) {
    out.back().arc.end = c.arc.end;
    return;
  }
  out.push_back(std::move(c));
}

template <typename Label, typename LabelOf>
std::vector<ArcChange<Label>> DiffBy(const Ring& before, const Ring& after, LabelOf label_of) {
  std::vector<ArcChange<Label>> out;
  if (before.empty() || after.empty()) return out;
  const std::vector<RingId> b = Boundaries(before, after);
  for (size_t j = 0; j < b.size(); ++j) {
    Label from = label_of(before, b[j]);
    Label to = label_of(after, b[j]);
    if (from == to) continue;
    const RingId start = j == 0 ? b.back() : b[j - 1];
    AppendMerged(out, ArcChange<Label>{Arc{start, b[j]}, std::move(from), std::move(to)});
  }
  // The arc that crosses id 0 may continue the last one.
  if (out.size() > 1 && out.back().arc.end == out.front().arc.start &&
      out.back().from == out.front().from && out.back().to == out.front().to) {
    out.front().arc.start = out.back().arc.start;
    out.pop_back();
  }
  return out;
}

}  // namespace

std::vector<OwnerMove> Diff(const Ring& before, const Ring& after) {
  return DiffBy<std::string>(before, after,
                             [](const Ring& ring, RingId k) { return ring.Successor(k).name; });
}

std::vector<ReplicaChange> ReplicaDiff(const Ring& before, const Ring& after, size_t r) {
  return DiffBy<std::vector<std::string>>(before, after, [r](const Ring& ring, RingId k) {
    std::vector<std::string> names;
    for (size_t i : ring.SuccessorList(k, r)) names.push_back(ring.member(i).name);
    return names;
  });
}

}  // namespace vsc::ring

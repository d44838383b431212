// GroupTable: the groups one relay worker owns (DESIGN.md §8): each group's bounded clip buffer,
// its subscribers, and which of its clips are visible yet. The owner's clip becomes visible —
// fetchable, and delivered to subscribers — only once its copies are done (Commit), and clips
// become visible in seq order, so a subscriber never sees a clip that a failover could lose or
// renumber, and never sees seq n + 1 before n. Copies stored on a successor are visible at once
// (they were committed on the owner's side).
//
// Bounds: groups per table, subscribers per group, and the buffer limits; every refusal says
// which bound and what to do. Pure (no I/O, no clock); not thread safe: one per worker.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "common/status.h"
#include "relay/group_buffer.h"

namespace vsc::relay {

using SubscriberId = uint64_t;

struct GroupLimits {
  BufferLimits buffer;
  size_t max_groups = 4096;
  size_t max_subscribers = 4096;  // per group
};

class GroupTable {
 public:
  explicit GroupTable(GroupLimits limits);

  // The owner's append: the clip's seq, not visible until Commit(group, seq). ResourceExhausted
  // when a new group would pass max_groups.
  Result<uint64_t> Append(const std::string& group, ClipBytes bytes);
  // The clip's copies are done (or failed: it is made visible either way, since it is stored
  // here). Returns the clips that became visible, in seq order, for the subscribers.
  std::vector<StoredClip> Commit(const std::string& group, uint64_t seq);
  // A copy from the owner or a handed-over clip: stored and visible. False for a duplicate.
  Result<bool> Insert(const std::string& group, uint64_t seq, ClipBytes bytes);

  // Visible clips with seq > since, at most max. `gone` is set when clips after since were
  // dropped from the bounded buffer.
  std::vector<StoredClip> Fetch(const std::string& group, uint64_t since, size_t max,
                                bool* gone = nullptr) const;
  // The highest visible seq of the group (0 when it has none).
  uint64_t Visible(const std::string& group) const;
  // True while one of the group's clips is appended but not visible yet (its copies are under
  // way): a handoff of the group waits until it is not.
  bool Pending(const std::string& group) const;
  // Every clip held, visible or not, oldest first: to restore copies on a new successor (a
  // clip still pending here becomes visible here too, whatever its copies do).
  std::vector<StoredClip> Held(const std::string& group) const;

  Status Subscribe(const std::string& group, SubscriberId id);
  void Unsubscribe(const std::string& group, SubscriberId id);
  std::vector<SubscriberId> Subscribers(const std::string& group) const;
  std::vector<std::string> SubscribedGroups() const;

  // Every group with clips, for a handoff: its name and visible clips.
  std::vector<std::string> Groups() const;
  size_t size() const { return groups_.size(); }

 private:
  struct Group {
    explicit Group(BufferLimits limits) : buffer(limits) {}
    GroupBuffer buffer;
    uint64_t visible = 0;          // every clip up to here is visible
    std::set<uint64_t> committed;  // committed seqs above visible + 1, waiting for a gap
    std::set<SubscriberId> subscribers;
  };
  Result<Group*> FindOrCreate(const std::string& group);
  const Group* Find(const std::string& group) const;

  GroupLimits limits_;
  std::map<std::string, Group, std::less<>> groups_;
};

}  // namespace vsc::relay

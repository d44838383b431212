#include "relay/group_table.h"

#include <algorithm>

namespace vsc::relay {

GroupTable::GroupTable(GroupLimits limits) : limits_(limits) {}

Result<GroupTable::Group*> GroupTable::FindOrCreate(const std::string& group) {
  if (auto it = groups_.find(group); it != groups_.end()) return &it->second;
  if (groups_.size() >= limits_.max_groups) {
    return ResourceExhausted("this node holds its maximum of " +
                             std::to_string(limits_.max_groups) +
                             " groups; use fewer groups or add ring nodes");
  }
  return &groups_.try_emplace(group, limits_.buffer).first->second;
}

const GroupTable::Group* GroupTable::Find(const std::string& group) const {
  auto it = groups_.find(group);
  return it == groups_.end() ? nullptr : &it->second;
}

Result<uint64_t> GroupTable::Append(const std::string& group, ClipBytes bytes) {
  VSC_ASSIGN_OR_RETURN(Group * g, FindOrCreate(group));
  return g->buffer.Append(std::move(bytes));
}

std::vector<StoredClip> GroupTable::Commit(const std::string& group, uint64_t seq) {
  auto it = groups_.find(group);
  if (it == groups_.end() || seq <= it->second.visible) return {};
  Group& g = it->second;
  g.committed.insert(seq);
  const uint64_t from = g.visible;
  while (!g.committed.empty() && *g.committed.begin() <= g.visible + 1) {
    g.visible = std::max(g.visible, *g.committed.begin());
    g.committed.erase(g.committed.begin());
  }
  // A seq the buffer dropped before its commit (a tiny buffer under a burst) leaves no hole.
  std::vector<StoredClip> out;
  for (StoredClip& c : g.buffer.Since(from, g.visible - from)) {
    if (c.seq <= g.visible) out.push_back(std::move(c));
  }
  return out;
}

Result<bool> GroupTable::Insert(const std::string& group, uint64_t seq, ClipBytes bytes) {
  VSC_ASSIGN_OR_RETURN(Group * g, FindOrCreate(group));
  if (!g->buffer.Insert(seq, std::move(bytes))) return false;
  if (seq > g->visible) {
    g->visible = seq;
    g->committed.clear();
  }
  return true;
}

std::vector<StoredClip> GroupTable::Fetch(const std::string& group, uint64_t since, size_t max,
                                          bool* gone) const {
  const Group* g = Find(group);
  if (gone != nullptr) *gone = g != nullptr && g->buffer.Gone(since);
  if (g == nullptr) return {};
  std::vector<StoredClip> out = g->buffer.Since(since, max);
  while (!out.empty() && out.back().seq > g->visible) out.pop_back();
  return out;
}

uint64_t GroupTable::Visible(const std::string& group) const {
  const Group* g = Find(group);
  return g == nullptr ? 0 : g->visible;
}

bool GroupTable::Pending(const std::string& group) const {
  const Group* g = Find(group);
  return g != nullptr && g->buffer.last_seq() > g->visible;
}

std::vector<StoredClip> GroupTable::Held(const std::string& group) const {
  const Group* g = Find(group);
  if (g == nullptr) return {};
  return g->buffer.Since(0, g->buffer.size());
}

Status GroupTable::Subscribe(const std::string& group, SubscriberId id) {
  VSC_ASSIGN_OR_RETURN(Group * g, FindOrCreate(group));
  if (g->subscribers.size() >= limits_.max_subscribers) {
    return ResourceExhausted("group '" + group + "' has its maximum of " +
                             std::to_string(limits_.max_subscribers) +
                             " subscribers; try again later or split the group");
  }
  g->subscribers.insert(id);
  return Status::Ok();
}

void GroupTable::Unsubscribe(const std::string& group, SubscriberId id) {
  auto it = groups_.find(group);
  if (it == groups_.end()) return;
  it->second.subscribers.erase(id);
  if (it->second.subscribers.empty() && it->second.buffer.size() == 0) groups_.erase(it);
}

std::vector<SubscriberId> GroupTable::Subscribers(const std::string& group) const {
  const Group* g = Find(group);
  if (g == nullptr) return {};
  return {g->subscribers.begin(), g->subscribers.end()};
}

std::vector<std::string> GroupTable::SubscribedGroups() const {
  std::vector<std::string> out;
  for (const auto& [name, g] : groups_) {
    if (!g.subscribers.empty()) out.push_back(name);
  }
  return out;
}

std::vector<std::string> GroupTable::Groups() const {
  std::vector<std::string> out;
  for (const auto& [name, g] : groups_) {
    if (g.buffer.size() > 0) out.push_back(name);
  }
  return out;
}

}  // namespace vsc::relay

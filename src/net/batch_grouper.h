// BatchGrouper: the datagrams of one receive batch grouped by where they go, so that each
// destination's datagrams leave in one sendmmsg(2) (UdpNatService: one group per session).
//
// Add(key, i) for datagram i of the batch; ForEach(f) then calls f(key, indices) once per
// distinct key, keys in the order they first appeared, each key's indices in the order they were
// added (a session's datagrams keep their order). Clear() starts the next batch.
//
// Pure. Allocation-free once its vectors have grown to the largest batch seen (Clear keeps their
// capacity). Finding a key is a scan of the keys seen so far in this batch: a batch is small
// (tens of datagrams) and most of it comes from a few clients.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace vsc::net {

template <typename Key>
class BatchGrouper {
 public:
  void Clear() {
    keys_.clear();
    group_of_.clear();
    counts_.clear();
  }

  void Add(const Key& key, uint32_t index) {
    size_t g = 0;
    while (g < keys_.size() && !(keys_[g] == key)) ++g;
    if (g == keys_.size()) {
      keys_.push_back(key);
      counts_.push_back(0);
    }
    ++counts_[g];
    group_of_.push_back({static_cast<uint32_t>(g), index});
  }

  size_t groups() const { return keys_.size(); }
  size_t size() const { return group_of_.size(); }

  // f(const Key&, std::span<const uint32_t> indices), once per key.
  template <typename F>
  void ForEach(F&& f) {
    // Counting sort by group: starts_[g] is where group g's indices begin in order_.
    starts_.assign(keys_.size() + 1, 0);
    for (size_t g = 0; g < keys_.size(); ++g) starts_[g + 1] = starts_[g] + counts_[g];
    order_.resize(group_of_.size());
    next_.assign(starts_.begin(), starts_.end() - 1);
    for (const Entry& e : group_of_) order_[next_[e.group]++] = e.index;
    for (size_t g = 0; g < keys_.size(); ++g) {
      f(keys_[g], std::span<const uint32_t>(order_.data() + starts_[g], counts_[g]));
    }
  }

 private:
  struct Entry {
    uint32_t group;
    uint32_t index;
  };
  std::vector<Key> keys_;
  std::vector<uint32_t> counts_;
  std::vector<Entry> group_of_;
  std::vector<uint32_t> starts_;
  std::vector<uint32_t> next_;
  std::vector<uint32_t> order_;
};

}  // namespace vsc::net

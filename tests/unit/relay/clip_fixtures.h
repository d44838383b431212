// What the relay tests share: the sequence numbers of a run of stored clips.
#pragma once

#include <cstdint>
#include <vector>

#include "relay/group_buffer.h"

namespace vsc::relay::testing_util {

inline std::vector<uint64_t> Seqs(const std::vector<StoredClip>& clips) {
  std::vector<uint64_t> out;
  for (const auto& c : clips) out.push_back(c.seq);
  return out;
}

}  // namespace vsc::relay::testing_util

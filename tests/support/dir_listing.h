// SortedListing: the names in a directory, sorted, for tests that check what a start-up left on
// disk.
#pragma once

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

namespace vsc::test_support {

inline std::vector<std::string> SortedListing(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    names.push_back(e.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace vsc::test_support

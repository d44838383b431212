// Reads the test vectors printed in docs/protocol.md, so tests check the document against the
// code: every "```hex <name>" block, as bytes, by name. The test target defines VSC_SOURCE_DIR
// (the source tree): __FILE__ is no guide, since ccache's base_dir makes it a relative path that
// does not resolve from the directory ctest runs the test in.
#pragma once

#ifndef VSC_SOURCE_DIR
#error "define VSC_SOURCE_DIR (the source tree) for a test that reads docs/protocol.md"
#endif

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace vsc::proto::testing {

inline std::map<std::string, std::vector<uint8_t>> ProtocolDocVectors() {
  const auto path = std::filesystem::path(VSC_SOURCE_DIR) / "docs/protocol.md";
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << "cannot read " << path;
  std::map<std::string, std::vector<uint8_t>> out;
  std::string line, name;
  bool inside = false;
  while (std::getline(in, line)) {
    if (!inside && line.rfind("```hex ", 0) == 0) {
      name = line.substr(7);
      inside = true;
      out[name];
    } else if (inside && line.rfind("```", 0) == 0) {
      inside = false;
    } else if (inside) {
      std::istringstream words(line);
      std::string w;
      // Words are hex bytes; a long word (a digest written in one piece) is several bytes.
      while (words >> w) {
        EXPECT_EQ(w.size() % 2, 0u) << "in block " << name << ": " << w;
        EXPECT_EQ(w.find_first_not_of("0123456789abcdefABCDEF"), std::string::npos)
            << "in block " << name << ": " << w;
        for (size_t i = 0; i + 1 < w.size(); i += 2) {
          out[name].push_back(static_cast<uint8_t>(std::stoul(w.substr(i, 2), nullptr, 16)));
        }
      }
    }
  }
  return out;
}

}  // namespace vsc::proto::testing

// One ConfigTable key of every supported type, for config_fuzz and its seeds (fuzz_seeds.cc).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>

#include "common/config.h"

namespace vsc::fuzz {

struct ConfigValues {
  std::string s = "default";
  int64_t i = -5;
  uint32_t u32 = 7;
  uint16_t u16 = 9;
  double d = 0.5;
  bool b = false;

  void Bind(vsc::ConfigTable& t) {
    t.Bind("s", &s, "a string");
    t.Bind("i", &i, "an int64");
    t.Bind("u32", &u32, "a uint32");
    t.Bind("u16", &u16, "a uint16");
    t.Bind("d", &d, "a double");
    t.Bind("b", &b, "a bool");
  }
  bool operator==(const ConfigValues& o) const {
    return s == o.s && i == o.i && u32 == o.u32 && u16 == o.u16 && b == o.b &&
           (std::memcmp(&d, &o.d, sizeof d) == 0 || (std::isnan(d) && std::isnan(o.d)));
  }
};

}  // namespace vsc::fuzz

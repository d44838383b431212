// Fuzzes the TOML configuration loader (ConfigTable::LoadTomlText, src/common/config.h) with one
// key of every supported type. Properties: a value loaded from a file is the file's value (a
// float keeps every bit, an integer is never wrapped into a narrower type); and what
// `--print-config` prints (ToToml) loads again, into a fresh table, to exactly the same values.
#include <toml++/toml.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

#include "common/config.h"
#include "config_values.h"

namespace {

// The file's own value of a key, as toml++ reads it, when it is there and of type T.
template <typename T>
std::optional<T> FileValue(std::string_view text, const char* key) {
  try {
    toml::table root = toml::parse(text);
    const toml::node* n = root["fuzz"][key].node();
    if (n == nullptr) n = root[key].node();
    if (n == nullptr) return std::nullopt;
    if constexpr (std::is_same_v<T, double>) {
      if (!n->is_floating_point()) return std::nullopt;
    } else {
      if (!n->is_integer()) return std::nullopt;
    }
    return n->value<T>();
  } catch (const toml::parse_error&) {
    return std::nullopt;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  vsc::fuzz::ConfigValues loaded;
  vsc::ConfigTable table("fuzz");
  loaded.Bind(table);
  if (!table.LoadTomlText(text, "fuzz.toml").ok()) return 0;

  if (auto d = FileValue<double>(text, "d"); d && !(std::isnan(*d) && std::isnan(loaded.d)) &&
                                             std::memcmp(&*d, &loaded.d, sizeof *d) != 0) {
    std::abort();  // the float in the file is not the float loaded
  }
  if (auto i = FileValue<int64_t>(text, "u16"); i && *i != loaded.u16) std::abort();
  if (auto i = FileValue<int64_t>(text, "u32"); i && *i != loaded.u32) std::abort();
  if (auto i = FileValue<int64_t>(text, "i"); i && *i != loaded.i) std::abort();

  const std::string printed = table.ToToml();
  vsc::fuzz::ConfigValues reloaded;
  vsc::ConfigTable again("fuzz");
  reloaded.Bind(again);
  if (!again.LoadTomlText(printed, "print-config").ok()) std::abort();
  if (!(reloaded == loaded)) std::abort();
  return 0;
}

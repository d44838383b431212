// Daemon configuration: one table of typed keys, each with a default, settable from a TOML file
// and from a command-line flag of the same name (`--heartbeat-interval-ms 200` sets
// `heartbeat_interval_ms`). Precedence: default < file < flag. `ToToml()` prints the effective
// configuration (what `--print-config` shows). A boolean flag may stand alone (`--insecure`) or
// take a value (`--insecure false`); a key whose name ends in `_ms` or `_s` also takes a value
// with a unit (`--read-timeout-ms 2s`). `--help` shows each flag's type and default.
//
// Usage: a daemon's config struct registers its fields once (`Bind`), the CLI layer calls
// `AddFlags(app)` before parsing and `Finish()` after. Exceptions are not used: errors come back
// as Status from Finish(). Not thread safe; used at start-up only.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "common/status.h"

namespace vsc {

// "" (a bare flag), true/1/yes/on → true; false/0/no/off → false; anything else → nullopt.
std::optional<bool> ParseBoolText(std::string_view text);

class ConfigTable {
 public:
  explicit ConfigTable(std::string section) : section_(std::move(section)) {}

  // T is one of std::string, int64_t, uint32_t, uint16_t, double, bool, or std::vector of
  // std::string (a repeatable flag, a TOML array of strings; flags given replace the file's
  // list). `value` must outlive the table; its current content is the default.
  template <typename T>
  void Bind(std::string key, T* value, std::string help) {
    Entry e;
    e.key = std::move(key);
    e.target = value;
    e.help = std::move(help);
    entries_.push_back(std::move(e));
  }

  // Adds `--config FILE`, `--print-config` and one flag per key to `app`.
  void AddFlags(CLI::App& app);

  // After parsing: applies the file (if --config was given), then the flags that were given.
  // Unknown keys in the file are an error (a typo must not be silently ignored).
  Status Finish();

  // Parses TOML text directly (tests, embedded configs): keys may be top-level or under
  // [section].
  Status LoadTomlText(std::string_view text, std::string_view origin);

  // Top-level tables (or arrays of tables) named `name` belong to another loader, e.g. the
  // director's [[service]] tables: skipped, not reported as unknown keys.
  void IgnoreTables(std::string name) { ignored_tables_.push_back(std::move(name)); }
  // The --config file given, or empty.
  const std::string& config_path() const { return config_path_; }

  bool print_config() const { return print_config_; }
  std::string ToToml() const;

 public:
  using Target = std::variant<std::string*, int64_t*, uint32_t*, uint16_t*, double*, bool*,
                              std::vector<std::string>*>;

 private:
  struct Entry {
    std::string key;
    Target target;
    std::string help;
    std::string flag_value;                // raw text from the command line
    std::vector<std::string> flag_values;  // the same, for a list (each use of the flag)
    CLI::Option* option = nullptr;
  };
  Status SetFromText(Entry& e, const std::string& text, std::string_view origin);
  Entry* Find(std::string_view key);

  std::string section_;
  std::vector<Entry> entries_;
  std::string config_path_;
  std::vector<std::string> ignored_tables_;
  bool print_config_ = false;
};

}  // namespace vsc

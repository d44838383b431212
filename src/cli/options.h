// The command-line conventions every subcommand shares (docs/operations.md "Command line"):
// - a boolean flag stands alone (`--insecure`) and also takes a value (`--insecure false`);
// - `--json [FILE]`: JSON to FILE, or alone (or `-`) JSON on stdout in place of the table;
// - a duration option names its unit (`--timeout-ms`) and also takes one (`--timeout-ms 2s`);
// - `--director HOST` names the director; its ports are options named after the director's own
//   keys (`--control-port`, `--write-port`, `--sql-port`, `--admin-port`);
// - options of a parent command may follow the subcommand (`vsc adm list --director H`).
// Parsing errors are CLI11 exceptions, which main turns into a message and exit code 2.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "common/status.h"

namespace vsc::cli {

CLI::Option* AddBoolFlag(CLI::App* cmd, const std::string& name, bool* value,
                         const std::string& help);

// `*ms` holds the default on entry; the option accepts "250", "250ms", "2s", "1m".
CLI::Option* AddMillisOption(CLI::App* cmd, const std::string& name, double* ms,
                             const std::string& help);

struct JsonOutput {
  bool wanted = false;
  std::string path;  // empty or "-": stdout
  bool to_stdout() const { return wanted && (path.empty() || path == "-"); }
  // Where the human-readable output goes: stderr when the JSON takes stdout.
  std::FILE* human() const { return to_stdout() ? stderr : stdout; }
};
CLI::Option* AddJsonOption(CLI::App* cmd, JsonOutput* out, const std::string& what);
// Writes the JSON text where `out` says; names the file on the human stream.
Status WriteJson(const JsonOutput& out, const std::string& text);
inline Status WriteJson(const JsonOutput& out, const nlohmann::json& j) {
  return WriteJson(out, j.dump(2));
}

// `--key-file FILE` and `--insecure` for commands that talk to authenticated ports.
void AddKeyOptions(CLI::App* cmd, std::string* key_file, bool* insecure);

// Lets every subcommand below `app` accept its parents' options after its own name.
void AllowParentOptionsAfterSubcommands(CLI::App& app);

}  // namespace vsc::cli

#include "cli/options.h"

#include <fstream>

#include "common/config.h"
#include "common/duration_text.h"

namespace vsc::cli {

CLI::Option* AddBoolFlag(CLI::App* cmd, const std::string& name, bool* value,
                         const std::string& help) {
  auto parse = [name, value](const std::string& text) {
    std::optional<bool> b = ParseBoolText(text);
    if (!b) throw CLI::ValidationError(name, "'" + text + "' is not true or false");
    *value = *b;
  };
  // CLI11 gives a bare option its default string as value: keep that empty, show the default
  // in the type name instead (ConfigTable does the same for the daemons).
  return cmd->add_option_function<std::string>(name, parse, help)
      ->expected(0, 1)
      ->type_name(std::string("[BOOL]=") + (*value ? "true" : "false"));
}

CLI::Option* AddMillisOption(CLI::App* cmd, const std::string& name, double* ms,
                             const std::string& help) {
  auto parse = [name, ms](const std::string& text) {
    auto d = ParseDuration(text, DurationUnit::kMillis);
    if (!d.ok()) throw CLI::ValidationError(name, d.status().message());
    *ms = static_cast<double>(*d);
  };
  char shown[32];
  std::snprintf(shown, sizeof shown, "%.0f", *ms);
  return cmd->add_option_function<std::string>(name, parse, help)
      ->type_name("MS")
      ->default_str(shown);
}

CLI::Option* AddJsonOption(CLI::App* cmd, JsonOutput* out, const std::string& what) {
  auto set = [out](const std::string& path) {
    out->wanted = true;
    out->path = path;
  };
  return cmd
      ->add_option_function<std::string>("--json", set,
                                         what + " as JSON: to FILE, or alone (or -) on stdout")
      ->expected(0, 1)
      ->type_name("[FILE]");
}

Status WriteJson(const JsonOutput& out, const std::string& text) {
  if (!out.wanted) return Status::Ok();
  if (out.to_stdout()) {
    std::printf("%s\n", text.c_str());
    std::fflush(stdout);
    return Status::Ok();
  }
  std::ofstream f(out.path, std::ios::trunc);
  f << text << "\n";
  if (!f.flush()) {
    return IoError("cannot write the JSON report to '" + out.path +
                   "'; check that the directory exists and is writable");
  }
  std::fprintf(out.human(), "  json: %s\n", out.path.c_str());
  return Status::Ok();
}

void AddKeyOptions(CLI::App* cmd, std::string* key_file, bool* insecure) {
  cmd->add_option("--key-file", *key_file, "cluster key file (else $VSC_CLUSTER_KEY)")
      ->type_name("FILE");
  AddBoolFlag(cmd, "--insecure", insecure, "use the all-zero key of an insecure test cluster");
}

void AllowParentOptionsAfterSubcommands(CLI::App& app) {
  for (CLI::App* sub : app.get_subcommands({})) {
    sub->fallthrough();
    AllowParentOptionsAfterSubcommands(*sub);
  }
}

}  // namespace vsc::cli

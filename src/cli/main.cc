// vsc: director, real server, admin, bench, loaddb and demo in one binary.
#include <cstdio>
#include <exception>
#include <string>
#include <string_view>
#include <vector>

#include "cli/commands.h"
#include "cli/options.h"

namespace vsc::cli {
int& ExitCode() {
  static int code = 0;
  return code;
}
}  // namespace vsc::cli

int main(int argc, char** argv) {
  if (argc >= 2 && std::string_view(argv[1]) == "adm") {
    const std::vector<std::string> adm_args(argv + 2, argv + argc);
    if (vsc::cli::IsIpvsadmStyle(adm_args)) return vsc::cli::RunIpvsadm(adm_args);
  }
  CLI::App app{"vscluster: a user-space server cluster in the tradition of LVS"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "vsc 0.1.0");
  // --- register subcommands (one line each) ---
  vsc::cli::AddLoaddbCommand(app);
  vsc::cli::AddBenchCommand(app);
  vsc::cli::AddBenchClusterCommands(*app.get_subcommand("bench"));
  vsc::cli::AddBenchReplicationCommands(*app.get_subcommand("bench"));
  vsc::cli::AddDirectorCommand(app);
  vsc::cli::AddRealServerCommand(app);
  vsc::cli::AddAdmCommand(app);
  vsc::cli::AddDemoCommand(app);
  vsc::cli::AddSqlCommand(app);
  vsc::cli::AddRingCommands(app);
  vsc::cli::AllowParentOptionsAfterSubcommands(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "vsc: %s\n", e.what());
    return 1;
  }
  return vsc::cli::ExitCode();
}

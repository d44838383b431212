// vsc realserver: runs a real server (agent + lookup services) until SIGINT/SIGTERM.
#include <cstdio>
#include <memory>

#include "cli/commands.h"
#include "cli/secrets.h"
#include "common/logging.h"
#include "common/signals.h"
#include "realserver/realserver.h"

namespace vsc::cli {

void AddRealServerCommand(CLI::App& app) {
  auto* cmd = app.add_subcommand("realserver", "run a real server");
  struct State {
    realserver::RealServerConfig config;
    ConfigTable table{"realserver"};
  };
  auto st = std::make_shared<State>();
  st->config.Bind(st->table);
  st->table.AddFlags(*cmd);
  cmd->callback([st] {
    if (Status s = st->table.Finish(); !s.ok()) {
      std::fprintf(stderr, "vsc realserver: %s\n", s.ToString().c_str());
      ExitCode() = 2;
      return;
    }
    if (st->table.print_config()) {
      std::fputs(st->table.ToToml().c_str(), stdout);
      return;
    }
    std::string role = st->config.id.empty() ? "realserver" : st->config.id;
    if (Status s = InitLogging(role, st->config.log_level); !s.ok()) {
      std::fprintf(stderr, "vsc realserver: %s\n", s.ToString().c_str());
      ExitCode() = 2;
      return;
    }
    auto key = ResolveClusterKey(st->config.key_file, st->config.insecure);
    if (!key.ok()) {
      std::fprintf(stderr, "vsc realserver: %s\n", key.status().ToString().c_str());
      ExitCode() = 2;
      return;
    }
    BlockTerminationSignals();
    RealClock clock;
    realserver::RealServer rs(st->config, *key, clock);
    if (Status s = rs.Start(); !s.ok()) {
      std::fprintf(stderr, "vsc realserver: %s\n", s.ToString().c_str());
      ExitCode() = 1;
      return;
    }
    ExitCode() = rs.RunUntilSignal();
  });
}

}  // namespace vsc::cli

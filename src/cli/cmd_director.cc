// vsc director: runs the load balancer until SIGINT/SIGTERM.
#include <cstdio>
#include <memory>

#include "cli/commands.h"
#include "cli/secrets.h"
#include "common/logging.h"
#include "common/signals.h"
#include "director/director.h"

namespace vsc::cli {

void AddDirectorCommand(CLI::App& app) {
  auto* cmd = app.add_subcommand("director", "run the director (load balancer)");
  struct State {
    director::DirectorConfig config;
    ConfigTable table{"director"};
  };
  auto st = std::make_shared<State>();
  st->config.Bind(st->table);
  st->table.AddFlags(*cmd);
  cmd->callback([st] {
    if (Status s = st->table.Finish(); !s.ok()) {
      std::fprintf(stderr, "vsc director: %s\n", s.ToString().c_str());
      ExitCode() = 2;
      return;
    }
    if (st->table.print_config()) {
      std::fputs(st->table.ToToml().c_str(), stdout);
      return;
    }
    if (Status s = InitLogging("director", st->config.log_level); !s.ok()) {
      std::fprintf(stderr, "vsc director: %s\n", s.ToString().c_str());
      ExitCode() = 2;
      return;
    }
    auto key = ResolveClusterKey(st->config.key_file, st->config.insecure);
    if (!key.ok()) {
      std::fprintf(stderr, "vsc director: %s\n", key.status().ToString().c_str());
      ExitCode() = 2;
      return;
    }
    auto token = ResolveAdminToken(st->config.admin_token_file);
    if (!token.ok()) {
      std::fprintf(stderr, "vsc director: %s\n", token.status().ToString().c_str());
      ExitCode() = 2;
      return;
    }
    BlockTerminationSignals();
    RealClock clock;
    director::Director d(st->config, *key, token->value, clock);
    if (Status s = d.Start([&token] { return CreateAdminTokenFile(*token); }); !s.ok()) {
      std::fprintf(stderr, "vsc director: %s\n", s.ToString().c_str());
      ExitCode() = 1;
      return;
    }
    d.RunUntilSignal();
  });
}

}  // namespace vsc::cli

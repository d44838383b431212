// vsc director: runs the load balancer until SIGINT/SIGTERM.
#include <cerrno>
#include <cstdio>
#include <memory>

#include "cli/commands.h"
#include "cli/secrets.h"
#include "common/file_text.h"
#include "common/logging.h"
#include "common/signals.h"
#include "director/director.h"
#include "director/service_store.h"

namespace vsc::cli {
namespace {

// The configuration file's text (for its [[service]] tables), or empty without one.
Result<director::Director::ConfigText> ReadConfigText(const std::string& path) {
  if (path.empty()) return director::Director::ConfigText{};
  auto text = ReadFileText(path);
  if (!text.ok()) return text.status().Annotate("config file");
  return director::Director::ConfigText{std::move(text).value(), path};
}

// The table the director starts with: the saved one, else the file's [[service]] tables.
Status LoadStartupServices(director::DirectorConfig& config, const std::string& config_path) {
  VSC_ASSIGN_OR_RETURN(auto text, ReadConfigText(config_path));
  VSC_ASSIGN_OR_RETURN(auto table, director::StartupServices(director::ServicesFilePath(config),
                                                             text.text, text.origin));
  config.services = std::move(table);
  return Status::Ok();
}

}  // namespace

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
    if (Status s = LoadStartupServices(st->config, st->table.config_path()); !s.ok()) {
      std::fprintf(stderr, "vsc director: %s\n", s.ToString().c_str());
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
    const std::string config_path = st->table.config_path();
    if (config_path.empty()) {
      d.RunUntilSignal();
    } else {
      d.RunUntilSignal([config_path] { return ReadConfigText(config_path); });
    }
  });
}

}  // namespace vsc::cli

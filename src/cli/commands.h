// The subcommands of `vsc`. Each Add*Command registers one subcommand (its flags and its
// callback) on the top-level app; the callback's return value becomes the exit code.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>
#include <vector>

namespace vsc::cli {

// Exit code of the subcommand that ran, set by its callback.
int& ExitCode();

// --- subcommands (one line each) ---
void AddLoaddbCommand(CLI::App& app);
void AddBenchCommand(CLI::App& app);
void AddBenchClusterCommands(CLI::App& bench);      // director-cpu, rs-lookup, scaling, loss
void AddBenchReplicationCommands(CLI::App& bench);  // replication
void AddDirectorCommand(CLI::App& app);
void AddRealServerCommand(CLI::App& app);
void AddAdmCommand(CLI::App& app);
// `vsc adm` with ipvsadm's options (cmd_adm_ipvsadm.cc): whether the arguments after "adm" are
// of that form (the first one, past --director and the like, starts with '-'; none at all =
// -L), and running them. Returns the exit code.
bool IsIpvsadmStyle(const std::vector<std::string>& adm_args);
int RunIpvsadm(std::vector<std::string> adm_args);
// `vsc adm role` and `vsc adm health` (cmd_adm_role.cc), keepalived's track scripts (issue 11):
// registered on `adm`, reaching the director named by `target` (filled by adm's options).
struct AdminTarget;
void AddAdmRoleCommands(CLI::App& adm, std::shared_ptr<const AdminTarget> target);
void AddDemoCommand(CLI::App& app);
void AddSqlCommand(CLI::App& app);
void AddRingCommands(CLI::App& app);  // ring, ring owner, clip publish|subscribe|fetch

}  // namespace vsc::cli

// The subcommands of `vsc`. Each Add*Command registers one subcommand (its flags and its
// callback) on the top-level app; the callback's return value becomes the exit code.
#pragma once

#include <CLI/CLI.hpp>

namespace vsc::cli {

// Exit code of the subcommand that ran, set by its callback.
int& ExitCode();

// --- subcommands (one line each) ---
void AddLoaddbCommand(CLI::App& app);
void AddBenchCommand(CLI::App& app);
void AddBenchClusterCommands(CLI::App& bench);  // director-cpu, rs-lookup, scaling, loss
void AddBenchReplicationCommands(CLI::App& bench);  // replication
void AddDirectorCommand(CLI::App& app);
void AddRealServerCommand(CLI::App& app);
void AddAdmCommand(CLI::App& app);
void AddDemoCommand(CLI::App& app);
void AddSqlCommand(CLI::App& app);
void AddRingCommands(CLI::App& app);  // ring, ring owner, clip publish|subscribe|fetch

}  // namespace vsc::cli

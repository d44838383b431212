// Running the `vsc` binary from the integration tests: one command to completion with its
// output captured, `vsc adm` against a cluster, and reading what a command wrote. Test thread
// only.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common/clock.h"

#ifndef VSC_BINARY
#error "VSC_BINARY must name the vsc executable (set by tests/integration/CMakeLists.txt)"
#endif

namespace vsc::integration {

// The whole content of a file ("" when it cannot be read).
std::string ReadFile(const std::string& path);

// Runs `vsc ARGS...` with stdout and stderr in `out_path`, in `cwd` (empty: this process's);
// returns (exit code, output), the code -1 when it has not exited within `timeout` (it is then
// killed).
std::pair<int, std::string> RunVsc(const std::vector<std::string>& args,
                                   const std::string& out_path, Duration timeout,
                                   const std::string& cwd = "");

// Runs `vsc adm --admin 127.0.0.1:PORT --token-file F ARGS...`, its output in work_dir.
std::pair<int, std::string> RunAdm(const std::string& work_dir, uint16_t admin_port,
                                   const std::string& token_file,
                                   const std::vector<std::string>& args);

}  // namespace vsc::integration

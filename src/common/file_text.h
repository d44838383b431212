// Whole small files as text: configuration, tokens, user lists, /proc and cgroup entries.
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"

namespace vsc {

// The whole content of `path`. A missing file is kNotFound, any other failure kIo; both say
// "cannot read PATH: <strerror>". /proc and cgroup files (size 0 in stat) read fully.
Result<std::string> ReadFileText(const std::string& path);

// The fields of a /proc/PID/stat (or /proc/PID/task/TID/stat) line from field 3, the state,
// on: everything after the command name's closing ')' and its space. The command name may
// hold spaces and parentheses, so the last ')' ends it.
Result<std::string_view> ProcStatFields(std::string_view stat);

}  // namespace vsc

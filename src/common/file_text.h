// Whole small files as text: configuration, tokens, user lists, /proc and cgroup entries.
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"

namespace vsc {

// The whole content of `path`. A missing file is kNotFound, any other failure kIo; both say
// "cannot read PATH: <strerror>". /proc and cgroup files (size 0 in stat) read fully.
Result<std::string> ReadFileText(const std::string& path);

// Writes `text` as the whole content of `path`, created or truncated in place (not atomic: for
// kernel control files such as cgroup.procs or cpu.max, where the kernel takes each write(2)
// whole and may refuse it, and for scratch files). kIo "cannot write PATH: <strerror>".
Status WriteFileText(const std::string& path, std::string_view text);

// The fields of a /proc/PID/stat (or /proc/PID/task/TID/stat) line from field 3, the state,
// on: everything after the command name's closing ')' and its space. The command name may
// hold spaces and parentheses, so the last ')' ends it.
Result<std::string_view> ProcStatFields(std::string_view stat);

}  // namespace vsc

// The run-queue length a real server reports in its heartbeats (seed 004 schedules `ll` on it):
// by default the node's, from /proc/loadavg; with `load_cgroup` set, that of one cgroup — the
// tasks of the cgroup and its descendants whose state is R (running or waiting for a CPU).
// A container sees its host's /proc/loadavg (the LXCFS pitfall), so real servers sharing one
// machine in containers would all report the same figure; their cgroups tell them apart.
// Either way the reading thread itself is not counted: it is running because it reads.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace vsc::realserver {

// The thread ids of a cgroup's task list (v1 `tasks`, v2 `cgroup.threads`): one decimal per line.
Result<std::vector<pid_t>> ParseTaskIds(std::string_view text);
// The state letter of /proc/<tid>/stat ("1234 (comm) R 1 ..."): the first field after the last
// ')', since the command name itself may hold spaces and parentheses.
Result<char> ParseTaskState(std::string_view stat);

class RunQueueSource {
 public:
  RunQueueSource() = default;  // /proc/loadavg
  // /proc/loadavg when `cgroup_dir` is empty; otherwise the cgroup directory (v1 or v2), which
  // must exist and hold a readable task list (a clear error at start-up, not a silent 0 later).
  static Result<RunQueueSource> Open(const std::string& cgroup_dir);

  // Runnable tasks now, the calling thread excluded.
  Result<uint32_t> Read() const;
  const std::string& cgroup_dir() const { return dir_; }

 private:
  explicit RunQueueSource(std::string dir, std::string list_name)
      : dir_(std::move(dir)), list_name_(std::move(list_name)) {}
  Result<uint32_t> ReadCgroup() const;

  std::string dir_;        // empty: /proc/loadavg
  std::string list_name_;  // "cgroup.threads" (v2) or "tasks" (v1)
};

}  // namespace vsc::realserver

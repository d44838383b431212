// Subprocess: starts and supervises child processes (the demo's cluster, bench scenarios,
// integration tests). Children get PR_SET_PDEATHSIG=SIGKILL, so none outlives its parent even
// when the parent is killed. Not thread safe; one owner.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "common/status.h"

namespace vsc {

struct SpawnOptions {
  std::vector<std::string> argv;  // argv[0] is the program path
  std::string log_path;           // stdout and stderr appended here; empty = inherit
  std::vector<std::pair<std::string, std::string>> env;  // added to the parent's environment
  std::string cwd;                 // working directory of the child (after log_path is opened);
                                   // empty = the parent's. argv[0] should then be absolute
  std::string cgroup_procs;        // if set, the child writes its pid here before exec
                                   // (e.g. /sys/fs/cgroup/cpu/vsc-rs1/cgroup.procs)
  bool new_process_group = false;  // the child leads a process group of its own (pgid = pid),
                                   // so kill(-pid, sig) reaches everything it starts
};

class Subprocess {
 public:
  static Result<Subprocess> Spawn(const SpawnOptions& options);

  Subprocess(Subprocess&& other) noexcept;
  Subprocess& operator=(Subprocess&& other) noexcept;
  Subprocess(const Subprocess&) = delete;
  Subprocess& operator=(const Subprocess&) = delete;
  // Kills (SIGKILL) and reaps a child still running.
  ~Subprocess();

  pid_t pid() const { return pid_; }
  // After the child was reaped: the signal that killed it, or nullopt if it exited.
  std::optional<int> term_signal() const { return term_signal_; }
  bool running();
  Status Signal(int sig);
  // Waits until the child exits or `timeout` passes. Returns the exit code (128+signal for a
  // signal death) or nullopt if it is still running.
  std::optional<int> Wait(Duration timeout);
  // SIGTERM, wait up to `grace`, then SIGKILL. Returns the exit code.
  int Terminate(Duration grace);

 private:
  explicit Subprocess(pid_t pid) : pid_(pid) {}
  void Reaped(int status);

  pid_t pid_ = -1;
  std::optional<int> exit_code_;
  std::optional<int> term_signal_;
};

// Path of the running executable (/proc/self/exe), for re-executing `vsc` as a child.
std::string SelfExecutable();

// Waits until `path` exists and is non-empty (written atomically by the daemon), or the timeout
// passes, or `child` exits. Returns its content.
Result<std::string> WaitForFile(const std::string& path, Duration timeout, Subprocess* child);

// Reads the CPU time (user + system) a process has used so far, from /proc/PID/stat.
Result<Duration> ProcessCpuTime(pid_t pid);

}  // namespace vsc

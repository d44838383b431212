#include "common/subprocess.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <sstream>

#include "common/file_text.h"

namespace vsc {
namespace {

// Polling interval for waits on things that give no event (a file appearing, a child exiting).
constexpr auto kPoll = std::chrono::milliseconds(5);

void Pause() {
  timespec ts{0, std::chrono::duration_cast<std::chrono::nanoseconds>(kPoll).count()};
  nanosleep(&ts, nullptr);
}

TimePoint Now() { return RealClock().Now(); }

}  // namespace

Result<Subprocess> Subprocess::Spawn(const SpawnOptions& options) {
  if (options.argv.empty()) return InvalidArgument("spawn: empty argv");
  const pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) return ErrnoStatus("fork", errno);
  if (pid == 0) {
    // Child: only async-signal-safe calls until exec.
    if (options.new_process_group) setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);  // the parent died before prctl
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);  // undo the daemon's blocked signals
    signal(SIGPIPE, SIG_DFL);
    if (!options.cgroup_procs.empty()) {
      int fd = open(options.cgroup_procs.c_str(), O_WRONLY);
      if (fd >= 0) {
        char buf[32];
        int n = snprintf(buf, sizeof(buf), "%d\n", getpid());
        if (write(fd, buf, n) != n) _exit(126);
        close(fd);
      } else {
        _exit(126);
      }
    }
    if (!options.log_path.empty()) {
      int fd = open(options.log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
      if (fd >= 0) {
        dup2(fd, 1);
        dup2(fd, 2);
        close(fd);
      }
    }
    if (!options.cwd.empty() && chdir(options.cwd.c_str()) != 0) _exit(125);
    for (const auto& [k, v] : options.env) setenv(k.c_str(), v.c_str(), 1);
    std::vector<char*> argv;
    for (const auto& a : options.argv) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  // Both sides set the group, so a kill(-pid) right after Spawn cannot miss it.
  if (options.new_process_group) setpgid(pid, pid);
  return Subprocess(pid);
}

Subprocess::Subprocess(Subprocess&& o) noexcept
    : pid_(o.pid_), exit_code_(o.exit_code_), term_signal_(o.term_signal_) {
  o.pid_ = -1;
}

Subprocess& Subprocess::operator=(Subprocess&& o) noexcept {
  if (this != &o) {
    if (pid_ > 0 && !exit_code_) {
      kill(pid_, SIGKILL);
      Wait(std::chrono::seconds(5));
    }
    pid_ = o.pid_;
    exit_code_ = o.exit_code_;
    term_signal_ = o.term_signal_;
    o.pid_ = -1;
  }
  return *this;
}

Subprocess::~Subprocess() {
  if (pid_ > 0 && !exit_code_) {
    kill(pid_, SIGKILL);
    Wait(std::chrono::seconds(5));
  }
}

void Subprocess::Reaped(int status) {
  if (WIFEXITED(status)) {
    exit_code_ = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    exit_code_ = 128 + WTERMSIG(status);
    term_signal_ = WTERMSIG(status);
  } else {
    exit_code_ = -1;
  }
}

bool Subprocess::running() {
  if (pid_ <= 0 || exit_code_) return false;
  int status = 0;
  pid_t r = waitpid(pid_, &status, WNOHANG);
  if (r == pid_) {
    Reaped(status);
    return false;
  }
  return r == 0;
}

Status Subprocess::Signal(int sig) {
  if (pid_ <= 0 || exit_code_) return FailedPrecondition("process is not running");
  if (kill(pid_, sig) != 0) return ErrnoStatus("kill " + std::to_string(pid_), errno);
  return Status::Ok();
}

std::optional<int> Subprocess::Wait(Duration timeout) {
  const TimePoint deadline = Now() + timeout;
  while (running()) {
    if (Now() >= deadline) return std::nullopt;
    Pause();
  }
  return exit_code_;
}

int Subprocess::Terminate(Duration grace) {
  if (running()) {
    (void)Signal(SIGTERM);
    if (!Wait(grace)) {
      (void)Signal(SIGKILL);
      Wait(std::chrono::seconds(5));
    }
  }
  return exit_code_.value_or(-1);
}

std::string SelfExecutable() {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0) return "vsc";
  return std::string(buf, static_cast<size_t>(n));
}

Result<std::string> WaitForFile(const std::string& path, Duration timeout, Subprocess* child) {
  const TimePoint deadline = Now() + timeout;
  for (;;) {
    struct stat st {};
    if (stat(path.c_str(), &st) == 0 && st.st_size > 0) {
      return ReadFileText(path);
    }
    if (child != nullptr && !child->running()) {
      return Unavailable("process " + std::to_string(child->pid()) + " exited before writing " +
                         path);
    }
    if (Now() >= deadline) return Unavailable("timed out waiting for " + path);
    Pause();
  }
}

Result<Duration> ProcessCpuTime(pid_t pid) {
  auto text = ReadFileText("/proc/" + std::to_string(pid) + "/stat");
  if (!text.ok()) return NotFound("no process " + std::to_string(pid));
  VSC_ASSIGN_OR_RETURN(std::string_view after_comm, ProcStatFields(*text));
  std::istringstream fields{std::string(after_comm)};
  std::string f;
  unsigned long long utime = 0, stime = 0;
  for (int i = 3; i <= 15 && fields >> f; ++i) {
    if (i == 14) utime = std::stoull(f);
    if (i == 15) stime = std::stoull(f);
  }
  const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
  return std::chrono::duration_cast<Duration>(
      std::chrono::duration<double>(static_cast<double>(utime + stime) / ticks));
}

}  // namespace vsc

// MISC_CHECK: run misc_path through /bin/sh in a process group of its own and wait for it
// without blocking: a pidfd (Linux 5.3+) becomes readable when the command exits. At
// misc_timeout the group gets SIGTERM, and SIGKILL 2 s later (keepalived's check_misc.c).
#include <fmt/format.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <asio/posix/stream_descriptor.hpp>
#include <asio/use_awaitable.hpp>
#include <cerrno>
#include <cstring>

#include "common/subprocess.h"
#include "director/probe.h"
#include "director/probe_deadline.h"
#include "net/as_tuple.h"

namespace vsc::director {

using net::kTuple;
namespace {

constexpr Duration kKillGrace = std::chrono::seconds(2);

}  // namespace

asio::awaitable<membership::ProbeResult> MiscProbe(vservice::CheckConfig check, Duration timeout) {
  auto ex = co_await asio::this_coro::executor;
  SpawnOptions options;
  options.argv = {"/bin/sh", "-c", check.misc_path};
  options.log_path = "/dev/null";  // a check's chatter does not belong in the director's log
  options.new_process_group = true;
  Result<Subprocess> spawned = Subprocess::Spawn(options);
  if (!spawned.ok())
    co_return ProbeFailure("cannot start misc_path: " + spawned.status().message());
  Subprocess child = std::move(*spawned);
  const pid_t group = child.pid();
  const int pidfd = static_cast<int>(syscall(SYS_pidfd_open, group, 0));
  if (pidfd < 0) {
    const int err = errno;
    kill(-group, SIGKILL);  // ~Subprocess reaps it
    co_return ProbeFailure(
        fmt::format("cannot watch the command: pidfd_open: {}; MISC_CHECK needs Linux "
                    "5.3 or later",
                    std::strerror(err)));
  }
  asio::posix::stream_descriptor watch(ex, pidfd);
  ProbeDeadline term(ex, timeout, [group] { kill(-group, SIGTERM); });
  ProbeDeadline killer(ex, timeout + kKillGrace, [group] { kill(-group, SIGKILL); });
  auto [ec] = co_await watch.async_wait(asio::posix::descriptor_base::wait_read, kTuple);
  // The command is a zombie now, so its pid, the group's id, cannot be reused yet: clear what
  // it left behind in its group, then reap it.
  kill(-group, SIGKILL);
  const std::optional<int> status = child.Wait(Duration::zero());
  if (ec || !status) co_return ProbeFailure("waiting for the command: " + ec.message());
  if (term.expired()) {
    co_return ProbeFailure(
        fmt::format("timed out after {:.0f} ms (misc_timeout); its process group was "
                    "killed",
                    ToMillis(timeout)));
  }
  co_return membership::MiscExitResult(*status, child.term_signal().has_value(),
                                       check.misc_dynamic);
}

}  // namespace vsc::director

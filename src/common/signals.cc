#include "common/signals.h"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

namespace vsc {
namespace {

sigset_t TerminationSet() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  return set;
}

sigset_t WithHangup(sigset_t set) {
  sigaddset(&set, SIGHUP);
  return set;
}

int Wait(const sigset_t& set) {
  int sig = 0;
  while (sigwait(&set, &sig) != 0) {
  }
  return sig;
}

}  // namespace

void BlockTerminationSignals() {
  // SIGHUP too: its default action ends the process; a daemon that does not wait for it keeps
  // it pending, and the director reloads on it (WaitForTerminationOrHangup).
  sigset_t set = WithHangup(TerminationSet());
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  signal(SIGPIPE, SIG_IGN);  // a peer closing a socket is an error value, not a process kill
}

int WaitForTerminationSignal() { return Wait(TerminationSet()); }

int WaitForTerminationOrHangup() { return Wait(WithHangup(TerminationSet())); }

void RequestTermination() { ::kill(::getpid(), SIGTERM); }

}  // namespace vsc

// WakeFd: an eventfd that one thread signals to end another thread's poll at once (Stop ending a
// blocking etcd watch, director/etcd_watch.h). Once signalled it stays readable, so every later
// poll on it returns at once too: it is for stopping, not for repeated wake-ups.
#pragma once

#include <sys/eventfd.h>
#include <unistd.h>

#include <cstdint>

#include "common/unique_fd.h"

namespace vsc {

class WakeFd {
 public:
  WakeFd() : fd_(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {}
  // The descriptor to poll for POLLIN; -1 when the eventfd could not be made.
  int fd() const { return fd_.get(); }
  void Signal() {
    if (fd_.get() < 0) return;
    const uint64_t one = 1;
    (void)!::write(fd_.get(), &one, sizeof one);
  }

 private:
  UniqueFd fd_;
};

}  // namespace vsc

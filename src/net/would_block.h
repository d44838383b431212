// Whether a failed non-blocking socket call only means "not now" (EAGAIN or EWOULDBLOCK, which
// POSIX lets differ): the caller waits for readiness instead of treating it as an error.
#pragma once

#include <cerrno>

namespace vsc::net {

inline bool WouldBlock(int err) { return err == EAGAIN || err == EWOULDBLOCK; }

}  // namespace vsc::net

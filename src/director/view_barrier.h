// ViewBarrier: how an admin change waits until the data path holds it. The control thread
// publishes each new view by posting it to every worker; a barrier posted behind those views
// calls back on the control thread once every worker has run them, so an answer sent after it
// is true for the very next request a client sends (issue 10: a request right after
// `POST /v1/servers/X/drain` answered could still be picked for X by a worker that had not yet
// run the new view).
//
// Thread: the control thread; the continuation runs there too.
#pragma once

#include <asio/awaitable.hpp>
#include <functional>

#include "common/clock.h"

namespace vsc::director {

// Given a continuation, calls it (on the control thread) once every worker holds every view
// published before the call.
using ViewBarrier = std::function<void(std::function<void()>)>;

// Completes once `barrier` called back (true) or `timeout` passed first (false: a worker did not
// run its queue in that time). Must run on the io_context the barrier calls back on.
asio::awaitable<bool> AwaitViewBarrier(const ViewBarrier& barrier, Duration timeout);

}  // namespace vsc::director

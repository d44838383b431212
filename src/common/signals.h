// Termination signals for daemons: block SIGINT/SIGTERM (and SIGHUP) in every thread (call before starting
// any thread, so threads inherit the mask) and wait for one synchronously in the main thread.
#pragma once

namespace vsc {

void BlockTerminationSignals();
// Returns the signal number received (SIGINT or SIGTERM).
int WaitForTerminationSignal();
// The same, and SIGHUP (blocked too by BlockTerminationSignals), for a daemon that reloads its
// configuration on a hangup: returns SIGINT, SIGTERM or SIGHUP.
int WaitForTerminationOrHangup();
// Sends this process SIGTERM, so that WaitForTerminationSignal returns: for a daemon's own
// threads that decide the process must end. Requires BlockTerminationSignals first.
void RequestTermination();

}  // namespace vsc

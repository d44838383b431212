// Termination signals for daemons: block SIGINT/SIGTERM in every thread (call before starting
// any thread, so threads inherit the mask) and wait for one synchronously in the main thread.
#pragma once

namespace vsc {

void BlockTerminationSignals();
// Returns the signal number received (SIGINT or SIGTERM).
int WaitForTerminationSignal();
// Sends this process SIGTERM, so that WaitForTerminationSignal returns: for a daemon's own
// threads that decide the process must end. Requires BlockTerminationSignals first.
void RequestTermination();

}  // namespace vsc

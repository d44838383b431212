// The ring part of `vsc demo` (`vsc demo --ring`; issue 9, seed 002): push-to-talk on the
// Chord ring. A director (the router) and 6 relay nodes as child processes; talkers publish
// clips to their groups in prefetch mode (straight to each group's owner), listeners subscribe;
// mid-run the owner of a busy group is killed with SIGKILL and later a seventh node joins. The
// route table's versions and the failover are printed as they happen; at the end every
// listener's clips are checked against what the talkers had acked (each acked clip heard once,
// with its bytes, in order) and so is a late fetch from the current owner. Returns the exit
// code: 0 when every check held, 1 otherwise (printed as `result: OK` / `result: FAILED`).
#pragma once

#include <string>

namespace vsc::cli {

struct RingDemoOptions {
  int nodes = 6;
  int groups = 4;         // one talker each
  int listeners = 2;      // per group
  double duration_s = 6;  // of talking; the kill at 1/3, the join at 2/3
  int clip_interval_ms = 25;
  std::string dir = "demo-run";  // the ring part works in DIR/ring
};

int RunRingDemo(const RingDemoOptions& options);

}  // namespace vsc::cli

// DirectorList: which director a real server tries next, and when (issue 11). A real server may
// be given the control addresses of every director host (the active one and its standbys,
// `director = ["a:7100", "b:7100"]`); it registers with whichever accepts it. Pure: no I/O, time
// is a parameter; the agent asks it for the address to try, the wait before trying and how long
// a connect may take.
//
// - An attempt that fails (no connection, no handshake, a refusal) moves on to the next address
//   at once, until every address has been tried once since the last registration: a round.
// - After a round in which some director answered "standby" (RegisterAck REFUSAL_STANDBY:
//   another director holds the sequencer lease), the next round starts after the first backoff
//   step and the backoff does not grow: the active director is there, or about to take over, and
//   the server must find it within a heartbeat period or two.
// - After a round in which no director answered, the wait doubles from kFirstBackoff up to
//   kMaxBackoff, as with one director.
// - A registration resets the backoff. When its session ends, the next attempt goes to the same
//   director first (it may only have restarted), after the first backoff step; and for
//   kSteadyAfterLoss after the loss silent rounds stay at that step, without doubling, and a
//   connect that has not completed within kSteadyConnectTimeout is given up and sent again: the
//   VIP or the lease is moving to another director (a failover takes about 1-3 s), and the
//   server must re-register within a heartbeat period or two of its arrival (issue 11). A SYN
//   sent while the VIP was between hosts is lost, and the kernel would resend it only after its
//   1 s initial RTO. Only a director that stays away longer is backed off from.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

#include "common/clock.h"

namespace vsc::realserver {

class DirectorList {
 public:
  static constexpr std::chrono::milliseconds kFirstBackoff{100};
  static constexpr std::chrono::milliseconds kMaxBackoff{2000};
  static constexpr std::chrono::milliseconds kSteadyAfterLoss{5000};
  static constexpr std::chrono::milliseconds kConnectTimeout{1000};
  static constexpr std::chrono::milliseconds kSteadyConnectTimeout{300};

  // `count` addresses, at least one; indexes into the caller's list.
  explicit DirectorList(size_t count);

  size_t current() const { return current_; }

  // The attempt at current() failed; `standby` when that director answered REFUSAL_STANDBY.
  // Moves to the next address and returns the wait before trying it (zero within a round).
  std::chrono::milliseconds OnFailure(bool standby, TimePoint now = TimePoint{});
  // The attempt at current() registered.
  void OnRegistered();
  // The registered session at current() ended: the wait before trying current() again.
  std::chrono::milliseconds OnSessionLost(TimePoint now = TimePoint{});
  // How long the next connect may take.
  std::chrono::milliseconds ConnectTimeout(TimePoint now) const {
    return now < steady_until_ ? kSteadyConnectTimeout : kConnectTimeout;
  }

 private:
  void StartRound();

  size_t count_;
  size_t current_ = 0;
  size_t tried_ = 0;           // addresses tried in this round
  bool standby_seen_ = false;  // a director of this round answered "standby"
  std::chrono::milliseconds backoff_ = kFirstBackoff;
  TimePoint steady_until_{};  // after a lost session: silent rounds do not double before then
};

}  // namespace vsc::realserver

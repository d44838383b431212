// UdpSessionTable: the UDP "connections" of one nat virtual service (DESIGN.md §3): which
// destination each client address:port was sent to, so that its later datagrams go to the same
// destination and the destination's replies are relayed back to it.
//
// LVS semantics (shared/reference/virtual_services.md §3.2): a session lives while datagrams
// keep arriving less than `timeout` apart (ipvsadm --set's udp value, default 300 s), refreshed
// by packets in either direction. With one-packet scheduling (ipvsadm -o) no session is kept:
// every datagram is scheduled on its own.
//
// Bounded: at max_sessions a new client is refused with ResourceExhausted (after reclaiming a
// session that has already expired), never silently dropped; existing sessions are not evicted,
// so a full table does not break clients that are mid-conversation.
//
// Pure: `now` is a parameter and must not go backwards between calls (one monotonic clock).
// Per worker, per service; not thread safe. Open/Lookup/Refresh/Close are O(1).
#pragma once

#include <chrono>
#include <cstddef>
#include <list>
#include <unordered_map>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "vservice/ip_address.h"

namespace vsc::vservice {

struct UdpSessionOptions {
  Duration timeout = std::chrono::seconds(300);  // ipvsadm --set tcp tcpfin UDP
  size_t max_sessions = 65536;
  bool one_packet = false;  // ipvsadm -o: keep no sessions
};

struct UdpSession {
  AddrPort client;
  AddrPort dest;
  TimePoint last_seen;
  friend bool operator==(const UdpSession&, const UdpSession&) = default;
};

class UdpSessionTable {
 public:
  // InvalidArgument when timeout <= 0 or max_sessions == 0.
  static Result<UdpSessionTable> Create(const UdpSessionOptions& options);

  UdpSessionTable(UdpSessionTable&&) = default;
  UdpSessionTable& operator=(UdpSessionTable&&) = default;

  // The destination of the client's live session, refreshing it (a client datagram), or
  // nullptr when there is none or it expired at `now` (then it is removed). The pointer is
  // valid until the next non-const call.
  const UdpSession* Lookup(const AddrPort& client, TimePoint now);

  // Records a new session client -> dest, seen at `now`. With one_packet, records nothing and
  // returns OK. AlreadyExists if the client has a live session (Lookup first);
  // ResourceExhausted when the table is full of live sessions.
  Status Open(const AddrPort& client, const AddrPort& dest, TimePoint now);

  // A reply from the destination: refreshes the live session. False if there is none.
  bool Refresh(const AddrPort& client, TimePoint now);

  // Ends the client's session (its destination was removed, say). False if there was none.
  bool Close(const AddrPort& client);

  // Ends every session to `dest`; returns how many. O(size).
  size_t CloseDest(const AddrPort& dest);

  // Removes and returns every session expired at `now` (last_seen + timeout <= now), oldest
  // first. Call it from a periodic timer so memory follows the live client count.
  std::vector<UdpSession> Expire(TimePoint now);

  // A new timeout (ipvsadm --set) applies to every session at once, as the kernel applies it
  // at each session's next packet.
  Status SetTimeout(Duration timeout);

  // Calls f(session) for every session, least recently seen first (ipvsadm -L -c).
  template <typename F>
  void ForEach(F&& f) const {
    for (const UdpSession& s : order_) f(s);
  }

  size_t size() const { return index_.size(); }
  const UdpSessionOptions& options() const { return options_; }

 private:
  explicit UdpSessionTable(const UdpSessionOptions& options) : options_(options) {}

  bool Expired(const UdpSession& s, TimePoint now) const {
    return s.last_seen + options_.timeout <= now;
  }
  void Touch(std::list<UdpSession>::iterator it, TimePoint now);

  UdpSessionOptions options_;
  // Sessions least recently seen first: since `now` never goes backwards, moving a session to
  // the back when it is seen keeps the list sorted by last_seen, so expiry looks at the front.
  std::list<UdpSession> order_;
  std::unordered_map<AddrPort, std::list<UdpSession>::iterator, AddrPortHash> index_;
};

}  // namespace vsc::vservice

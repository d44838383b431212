// TCP proxying for the `nat` forwarding method (DESIGN.md §3): pump bytes between two connected
// sockets until both directions have ended, and connect with a deadline.
//
// How bytes move: a direction's first wait holds no buffer, so a connection that never sends
// holds none. From its first byte on, it receives through asio into a 512-byte landing buffer
// (one recv(2) per message, none returning EAGAIN after a short read); a message that fills the
// landing is read on into the worker thread's 16 KiB scratch buffer, and sent at once. Only
// bytes the destination does not take at once are copied into a buffer of the connection's own
// (the direction reads nothing more until they are sent, and frees it then), so a keep-alive
// connection idle after small messages holds 2 × 512 bytes. A read that fills the whole 16 KiB
// shows a bulk stream, and from then on that direction uses splice(2) socket → pipe → socket
// (zero copy, a pipe pair created lazily for that direction only). Short request/response
// exchanges, the common case for the services in the seeds, thus never pay for pipe creation
// (two pipe2 calls, four descriptors, pipe pages counted against the user's pipe quota), while
// bulk transfers are not copied. `splice_threshold = 0` splices from the first byte.
//
// The engine is a chain of asio handlers per direction, not a coroutine: an open connection
// costs its state (both sockets, the idle timer, the buffers above) and one pending operation
// per direction, not coroutine frames.
//
// Half-close: when one side ends its stream (EOF), the proxy finishes writing what it holds to
// the other side, then shuts down the other side's write half; the opposite direction keeps
// flowing. The proxy ends when both directions have seen EOF (status OK), when a socket fails
// (ECONNRESET, EPIPE...: both sockets are reset, status kIo naming the side), when its owner
// closes it (ProxyHandle: both reset, kUnavailable with the owner's reason), or when neither
// direction moved a byte for the idle limit (both closed, status kUnavailable). The limit is
// `timeouts` when given (FlowTimeouts: tcp while both directions flow, tcpfin once one has
// ended, read afresh at every tick so ipvsadm --set reaches open connections), else
// idle_timeout. Idle detection ticks every limit/4, so an idle connection is closed after
// between 1 and 1.25 times the limit; idle_timeout <= 0 (without timeouts) disables it.
//
// Threads: the handlers run on the sockets' executor (one worker); both sockets must belong to
// it. StartProxy() sets SIGPIPE to ignored for the process once, because splice(2) into a
// socket whose peer is gone raises SIGPIPE (there is no MSG_NOSIGNAL for splice).
#pragma once

#include <array>
#include <asio/any_io_executor.hpp>
#include <asio/awaitable.hpp>
#include <asio/ip/tcp.hpp>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "common/clock.h"
#include "common/status.h"
#include "net/flow_timeouts.h"

namespace vsc::net {

// What a running proxy reports of itself (ipvsadm -L -c: a connection's state and expiry).
struct ProxyFlowState {
  bool half_closed = false;  // one direction has ended (LVS's FIN_WAIT)
  Duration idle{};           // since a byte last moved either way (to a quarter of the limit)
  Duration limit{};          // the idle limit that applies now; <= 0: none
  size_t buffer_bytes = 0;   // the copy buffers both directions hold now
};

// What a running proxy lets its handle do (the proxy implements it).
class ProxyControl {
 public:
  virtual ~ProxyControl() = default;
  virtual void CloseFlow(const std::string& reason) = 0;
  virtual ProxyFlowState Inspect() const = 0;
};

// A running Proxy seen from outside. Close() ends it, as LVS's expire_nodest_conn and HAProxy's
// `on-marked-down shutdown-sessions` end flows to a removed or failed server: both sockets are
// reset and the proxy ends with kUnavailable naming the reason; Close() before the proxy starts
// ends it as it starts; after it ended, Close() does nothing. Inspect() is the proxy's state,
// nullopt before it starts and after it ended. The owner passes one in ProxyOptions::handle and
// calls both on the proxy's executor. Bind/Unbind are the proxy's.
class ProxyHandle {
 public:
  void Close(const std::string& reason);
  std::optional<ProxyFlowState> Inspect() const;
  void Bind(std::weak_ptr<ProxyControl> control);
  void Unbind() { control_.reset(); }

 private:
  std::weak_ptr<ProxyControl> control_;
  std::optional<std::string> pending_;
};

struct ProxyOptions {
  Duration idle_timeout = std::chrono::seconds(300);
  size_t splice_threshold = 16 * 1024;
  // Optional meters, bumped (relaxed atomics) as bytes are written, so statistics move while
  // the connection is open: [0] direction a->b, [1] b->a; each direction feeds up to two
  // sinks (a destination's and its service's). live_writes counts write calls (the
  // "packets" of a stream, as near as user space sees them).
  std::array<std::array<std::atomic<uint64_t>*, 2>, 2> live_bytes{};
  std::array<std::array<std::atomic<uint64_t>*, 2>, 2> live_writes{};
  std::shared_ptr<ProxyHandle> handle;           // optional
  std::shared_ptr<const FlowTimeouts> timeouts;  // optional; replaces idle_timeout
};

struct ProxyResult {
  uint64_t bytes_a_to_b = 0;
  uint64_t bytes_b_to_a = 0;
  uint64_t bytes_spliced = 0;  // how many of the bytes above went through splice(2)
  Status status;
};

// Called once, on the sockets' executor, when the proxy has ended (never from inside
// StartProxy).
using ProxyDone = std::function<void(ProxyResult)>;

// Starts proxying between a and b and returns at once; `done` gets the result.
void StartProxy(asio::ip::tcp::socket a, asio::ip::tcp::socket b, ProxyOptions options,
                ProxyDone done);

// The same, awaited.
asio::awaitable<ProxyResult> Proxy(asio::ip::tcp::socket a, asio::ip::tcp::socket b,
                                   ProxyOptions options);

// Connects within `timeout`. Refused / unreachable: kIo with the errno text
// ("connect 10.0.0.5:80: Connection refused"); no answer in time: kUnavailable
// ("connect 10.0.0.5:80: no answer within 500 ms"); no local socket (EMFILE, ENFILE, ENOBUFS,
// ENOMEM): kResourceExhausted, the destination not tried, so callers do not blame it.
asio::awaitable<Result<asio::ip::tcp::socket>> Connect(asio::any_io_executor ex,
                                                       asio::ip::tcp::endpoint ep,
                                                       Duration timeout);

}  // namespace vsc::net

// LookupChannel: the load generator's non-blocking socket to one lookup target. Sends encoded
// requests (framed on TCP) and hands every complete answer that has arrived to a callback,
// without waiting, so one worker thread can keep many requests outstanding.
//
// UDP: one unconnected socket; answers are accepted from any source (dr mode). TCP: one
// connection, requests pipelined; after the connection fails, the next Send() reconnects
// (blocking up to the connect timeout) and answers in flight on the old connection are lost.
//
// Owned and used by one worker thread.
#pragma once

#include <netinet/in.h>

#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "client/lookup_target.h"
#include "common/unique_fd.h"
#include "common/clock.h"
#include "common/status.h"

namespace vsc::bench {

class LookupChannel {
 public:
  using AnswerFn = std::function<void(std::span<const uint8_t>)>;

  // Opens the socket (connects, for TCP, within connect_timeout).
  static Result<std::unique_ptr<LookupChannel>> Open(client::Transport transport,
                                                     const net::SockAddr& target,
                                                     Duration connect_timeout,
                                                     const Clock& clock);
  virtual ~LookupChannel() = default;

  // The descriptor to poll; -1 while a TCP channel is disconnected.
  virtual int fd() const = 0;
  // True when queued bytes wait for the socket to become writable (TCP only).
  virtual bool WantsWrite() const { return false; }
  // Sends or queues one encoded request. A non-OK status means the request did not leave.
  virtual Status Send(std::span<const uint8_t> request) = 0;
  // Reads everything available now and calls on_answer for each message. A non-OK status means
  // the channel broke (TCP closed or framing error); outstanding answers will not arrive.
  virtual Status Poll(short revents, const AnswerFn& on_answer) = 0;
};

}  // namespace vsc::bench

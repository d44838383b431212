// The agent's internals shared by agent.cc (the session) and agent_register.cc (the way to it):
// one registration attempt, and the reading of a frame. Not for use outside the agent.
#pragma once

#include <asio.hpp>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "proto/envelope.h"
#include "proto/frame.h"
#include "realserver/agent.h"

namespace vsc::realserver {

// One attempt to register: the connection and what came of it.
struct Agent::Attempt {
  enum class Outcome { kRetry, kRegistered, kExit };
  Outcome outcome = Outcome::kRetry;
  bool standby = false;  // the director refused as a standby (REFUSAL_STANDBY)
  std::unique_ptr<asio::ip::tcp::socket> socket;
  proto::FrameDecoder decoder{proto::kMaxEnvelopeBytes};
  std::vector<uint8_t> buf = std::vector<uint8_t>(64 * 1024);
  // The director's counters on this session, from its (nonce-proven) RegisterAck on.
  proto::ReplayGuard replay{1};
  int exit_code = 0;
  std::string exit_reason;
  bool handshake_timed_out = false;  // the handshake deadline closed the socket
};

// The next frame of the session, reading as needed.
asio::awaitable<Result<std::vector<uint8_t>>> ReadAgentFrame(asio::ip::tcp::socket& socket,
                                                             proto::FrameDecoder& decoder,
                                                             std::vector<uint8_t>& buf);

}  // namespace vsc::realserver

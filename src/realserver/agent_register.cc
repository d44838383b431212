// The agent's way to a registration: connect, answer the director's challenge, register, read
// the RegisterAck (agent.h, docs/protocol.md "Session handshake").
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <spdlog/spdlog.h>

#include <asio/experimental/as_tuple.hpp>

#include "net/endpoint.h"
#include "realserver/agent_attempt.h"
#include "realserver/replication_wire.h"

namespace vsc::realserver {

using asio::use_awaitable;
using asio::experimental::as_tuple;
using namespace std::chrono_literals;

asio::awaitable<Result<std::vector<uint8_t>>> ReadAgentFrame(asio::ip::tcp::socket& socket,
                                                             proto::FrameDecoder& decoder,
                                                             std::vector<uint8_t>& buf) {
  for (;;) {
    auto frame = decoder.Next();
    if (!frame.ok()) co_return frame.status();
    if (frame->has_value()) co_return std::move(**frame);
    auto [ec, n] = co_await socket.async_read_some(asio::buffer(buf), as_tuple(use_awaitable));
    if (ec) {
      co_return Unavailable(ec == asio::error::eof ? std::string("it closed the connection")
                                                   : ec.message());
    }
    decoder.Feed(std::span<const uint8_t>(buf.data(), n));
  }
}

namespace {

// TCP keepalive on the control session: a probe after 1 s idle, then every 1 s; 3 unanswered end
// the session. A director under a lease may send nothing for long (no writes); the probes
// still find out when the session's far end changed: a VIP that moved to another director host
// answers the first probe with a reset (issue 11), and a host that is gone ends the session
// within 4 s.
void KeepProbing(asio::ip::tcp::socket& socket) {
  asio::error_code ignore;
  socket.set_option(asio::socket_base::keep_alive(true), ignore);
  const int idle = 1, interval = 1, count = 3;
  ::setsockopt(socket.native_handle(), IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
  ::setsockopt(socket.native_handle(), IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof interval);
  ::setsockopt(socket.native_handle(), IPPROTO_TCP, TCP_KEEPCNT, &count, sizeof count);
}

}  // namespace

const asio::ip::tcp::endpoint& Agent::director() const {
  return options_.directors[directors_.current()];
}

std::string Agent::director_text() const { return net::ToString(director()); }

void Agent::Problem(std::string_view kind, const std::string& text) {
  if (stopping_) return;  // Stop closed the attempt: not a problem with the director
  // Per director: with several, each one's repeating problem is reported on its own.
  auto held = problems_[directors_.current()].Admit(kind, clock_.Now());
  if (!held) return;
  if (*held == 0) {
    spdlog::warn("{}", text);
  } else {
    spdlog::warn("{} ({} more attempts failed the same way since the last report)", text, *held);
  }
}

proto::Message Agent::MakeRegister(const proto::Nonce& challenge, const proto::Nonce& own) const {
  proto::Message m;
  proto::Register* reg = m.mutable_register_();
  reg->set_id(options_.id);
  reg->set_incarnation(options_.incarnation);
  reg->set_weight(options_.weight);
  for (const auto& e : options_.endpoints) *reg->add_endpoints() = e;
  for (const auto& c : options_.capabilities) reg->add_capabilities(c);
  if (options_.position) {
    const ReplicaPosition p = options_.position();
    reg->set_applied_seq(p.applied_seq);
    reg->set_digest(DigestBytes(p.digest));
    if (p.applied_seq == 0) reg->set_content_checksum(p.content_checksum);
  }
  if (options_.schema) {
    for (std::string& sql : options_.schema()) reg->add_schema(std::move(sql));
  }
  reg->set_challenge(proto::NonceString(challenge));
  reg->set_agent_nonce(proto::NonceString(own));
  return m;
}

asio::awaitable<void> Agent::Register(Agent* self, Attempt& a) {
  a.socket = std::make_unique<asio::ip::tcp::socket>(self->io_);
  self->attempt_socket_ = a.socket.get();
  // Connect with a deadline: a timer closes the socket if the connect hangs.
  asio::steady_timer deadline(self->io_);
  const std::chrono::milliseconds connect_timeout =
      self->directors_.ConnectTimeout(self->clock_.Now());
  deadline.expires_after(connect_timeout);
  asio::ip::tcp::socket* raw = a.socket.get();
  deadline.async_wait([raw](const asio::error_code& ec) {
    if (!ec) {
      asio::error_code ignore;
      raw->close(ignore);
    }
  });
  auto [cec] = co_await a.socket->async_connect(self->director(), as_tuple(use_awaitable));
  deadline.cancel();
  if (cec) {
    self->counters_.connect_failures.Add();
    self->Problem("connect",
                  "cannot connect to the director at " + self->director_text() + ": " +
                      (cec == asio::error::operation_aborted
                           ? "timed out after " + std::to_string(connect_timeout.count()) + " ms"
                           : cec.message()) +
                      "; is the director running, with its control port there "
                      "(setting `director`)? retrying");
    co_return;
  }
  asio::error_code ignore;
  a.socket->set_option(asio::ip::tcp::no_delay(true), ignore);
  KeepProbing(*a.socket);
  deadline.expires_after(self->options_.handshake_timeout);
  deadline.async_wait([raw, &a](const asio::error_code& ec) {
    if (ec) return;
    a.handshake_timed_out = true;
    asio::error_code ignore_close;
    raw->close(ignore_close);
  });
  co_await Handshake(self, a);
  deadline.cancel();
}

asio::awaitable<std::optional<std::vector<uint8_t>>> Agent::HandshakeFrame(
    Agent* self, Attempt& a, const std::string& missing) {
  const std::string at = self->director_text();
  auto frame = co_await ReadAgentFrame(*a.socket, a.decoder, a.buf);
  if (!frame.ok()) {
    const std::string why =
        a.handshake_timed_out
            ? "within " + std::to_string(self->options_.handshake_timeout.count()) + " ms"
            : frame.status().message();
    self->Problem("handshake", "the director at " + at + " " + missing + ": " + why + "; retrying");
    co_return std::nullopt;
  }
  if (proto::IsAuthFailed(*frame)) {
    self->Problem("auth", std::string(proto::kAuthFailedText) + " (director " + at + ")");
    co_return std::nullopt;
  }
  co_return std::move(frame).value();
}

asio::awaitable<void> Agent::Handshake(Agent* self, Attempt& a) {
  const std::string at = self->director_text();
  auto first = co_await HandshakeFrame(self, a, "sent no session challenge");
  if (!first) co_return;
  auto challenge = proto::ParseChallenge(*first);
  if (!challenge.ok()) {
    self->Problem("handshake", "director " + at + ": " + challenge.status().message());
    co_return;
  }
  const proto::Nonce own = proto::NewNonce();
  // No session writer exists yet: this is the only write until registration is accepted.
  std::vector<uint8_t> out;
  proto::AppendFrame(out, self->Sealed(self->MakeRegister(*challenge, own)));
  auto [wec, wn] =
      co_await asio::async_write(*a.socket, asio::buffer(out), as_tuple(use_awaitable));
  (void)wn;
  if (wec) {
    self->Problem("handshake", "the director at " + at + " did not take the registration: " +
                                   wec.message() + "; retrying");
    co_return;
  }
  auto answer = co_await HandshakeFrame(self, a, "did not answer the registration");
  if (!answer) co_return;
  auto opened = self->codec_.Open(*answer);
  if (!opened.ok()) {
    self->Problem("auth", opened.status().code() == Code::kUnauthenticated
                              ? "authentication failed: wrong cluster key? The answer of the "
                                "director at " +
                                    at + " does not verify under our key"
                              : "director " + at + ": " + opened.status().message());
    co_return;
  }
  if (!opened->message.has_register_ack() ||
      opened->message.register_ack().agent_nonce() != proto::NonceString(own)) {
    self->counters_.frames_dropped.Add();
    self->Problem("handshake", "the director at " + at +
                                   " did not answer the registration with "
                                   "a RegisterAck for this session (a replayed answer, or another "
                                   "vsc version); retrying");
    co_return;
  }
  (void)a.replay.Accept(opened->sender, opened->counter);  // fresh: starts the session's window
  self->OnAck(a, opened->message.register_ack());
}

void Agent::OnAck(Attempt& a, const proto::RegisterAck& ack) {
  if (ack.accepted()) {
    a.outcome = Attempt::Outcome::kRegistered;
    interval_ = std::chrono::milliseconds(std::max<uint32_t>(ack.heartbeat_interval_ms(), 10));
    heartbeat_to_ =
        asio::ip::udp::endpoint(director().address(), static_cast<uint16_t>(ack.heartbeat_port()));
    return;
  }
  counters_.refusals.Add();
  const std::string refused = "the director at " + director_text() + " refused the registration";
  switch (ack.refusal()) {
    case proto::RegisterAck::REFUSAL_DUPLICATE_ID:
      a.outcome = Attempt::Outcome::kExit;
      a.exit_code = 1;
      a.exit_reason = refused + ": " + ack.reason();
      spdlog::error("{}; exiting with code 1 rather than take the id from a live server",
                    a.exit_reason);
      return;
    case proto::RegisterAck::REFUSAL_STANDBY:
      a.standby = true;
      counters_.standby_refusals.Add();
      Problem("standby", refused + ": " + ack.reason() + "; trying the next director");
      return;
    case proto::RegisterAck::REFUSAL_REMOVED:
      a.outcome = Attempt::Outcome::kExit;
      a.exit_code = 0;
      a.exit_reason = "removed by the operator: " + ack.reason();
      spdlog::warn("{}; exiting", a.exit_reason);
      return;
    default:
      spdlog::error("{}: {}; retrying", refused, ack.reason());
      return;
  }
}

}  // namespace vsc::realserver

#include "realserver/agent.h"

#include <spdlog/spdlog.h>

#include <asio/experimental/as_tuple.hpp>
#include <future>

#include "proto/frame.h"
#include "realserver/replication_wire.h"

namespace vsc::realserver {
namespace {

using asio::use_awaitable;
using asio::experimental::as_tuple;
using namespace std::chrono_literals;

// Frames written per async_write: enough to batch a burst of acks, small enough not to hold
// a huge buffer.
constexpr size_t kMaxWriteBytes = 256 * 1024;

}  // namespace

// One registered control session. The reader is Run(); the only writer is Writer().
struct Agent::Session {
  Session(asio::io_context& io, std::unique_ptr<asio::ip::tcp::socket> s, uint64_t id)
      : socket(std::move(s)), wake(io), id(id) {}
  std::unique_ptr<asio::ip::tcp::socket> socket;
  asio::steady_timer wake;  // cancelled to wake the writer when the queue gets work
  uint64_t id;
  std::deque<std::vector<uint8_t>> queue;  // framed, sealed messages
  bool closing = false;                    // close once the queue is written
  bool writer_done = false;
  std::vector<std::function<void()>> on_closed;  // run when the writer has finished
};

Agent::Agent(asio::io_context& io, AgentOptions options, const proto::ClusterKey& key,
             const Clock& clock, LoadTracker& load)
    : io_(io),
      options_(std::move(options)),
      codec_(key),
      counter_(clock.WallMicros()),
      clock_(clock),
      load_(load),
      director_text_(options_.director.address().to_string() + ":" +
                     std::to_string(options_.director.port())),
      retry_timer_(io),
      heartbeat_timer_(io) {}

void Agent::Start() { asio::co_spawn(io_, Run(this), asio::detached); }

std::vector<uint8_t> Agent::Sealed(const proto::Message& m) {
  return codec_.Seal(options_.id, counter_.Next(), m);
}

void Agent::Enqueue(const std::shared_ptr<Session>& s, const proto::Message& m) {
  if (s->closing || s->writer_done) return;
  std::vector<uint8_t> frame;
  proto::AppendFrame(frame, Sealed(m));
  s->queue.push_back(std::move(frame));
  s->wake.cancel();
}

void Agent::Send(uint64_t session, proto::Message message) {
  asio::post(io_, [this, session, m = std::move(message)] {
    if (!session_ || session_->id != session) return;  // the session it answers is gone
    if (m.has_replica_ack()) counters_.acks_sent.Add();
    Enqueue(session_, m);
  });
}

void Agent::CloseSession(uint64_t session) {
  asio::post(io_, [this, session] {
    if (!session_ || session_->id != session) return;
    session_->closing = true;
    session_->wake.cancel();
  });
}

asio::awaitable<void> Agent::Writer(Agent* self, std::shared_ptr<Session> s) {
  (void)self;
  std::vector<uint8_t> out;
  for (;;) {
    if (s->queue.empty()) {
      if (s->closing || !s->socket->is_open()) break;
      s->wake.expires_at(asio::steady_timer::time_point::max());
      co_await s->wake.async_wait(as_tuple(use_awaitable));
      continue;
    }
    out.clear();
    while (!s->queue.empty() && out.size() < kMaxWriteBytes) {
      out.insert(out.end(), s->queue.front().begin(), s->queue.front().end());
      s->queue.pop_front();
    }
    auto [ec, n] =
        co_await asio::async_write(*s->socket, asio::buffer(out), as_tuple(use_awaitable));
    (void)n;
    if (ec) break;
  }
  s->writer_done = true;
  s->queue.clear();
  asio::error_code ignore;
  s->socket->shutdown(asio::ip::tcp::socket::shutdown_both, ignore);
  s->socket->close(ignore);  // the reader sees it and the agent reconnects
  auto callbacks = std::move(s->on_closed);
  for (auto& f : callbacks) f();
}

void Agent::Dispatch(uint64_t session, proto::Message& m) {
  switch (m.body_case()) {
    case proto::Message::kReplicate:
      counters_.replicate_received.Add();
      if (options_.on_replicate) options_.on_replicate(session, std::move(*m.mutable_replicate()));
      break;
    case proto::Message::kInstallSnapshot:
      counters_.snapshots_requested.Add();
      spdlog::info("director asks for a snapshot from {} ({}:{}): {}",
                   m.install_snapshot().peer_id(), m.install_snapshot().host(),
                   m.install_snapshot().http_port(), m.install_snapshot().reason());
      if (options_.on_install_snapshot) options_.on_install_snapshot(session, m.install_snapshot());
      break;
    case proto::Message::kRingTable:
      counters_.ring_tables.Add();
      if (options_.on_ring_table) options_.on_ring_table(m.ring_table().table());
      break;
    case proto::Message::kCommand:
      if (m.command().kind() == "removed") {
        // The director closes the session after this; Run then ends the agent.
        exit_.emplace(0,
                      "removed by the operator (vsc adm remove) at the director " + director_text_);
        spdlog::warn("{}; leaving the cluster and exiting", exit_->second);
        break;
      }
      spdlog::info("director notice: {} {}", m.command().kind(), m.command().weight());
      break;
    case proto::Message::kDeregister:
      spdlog::warn("director ended the registration: {}", m.deregister().reason());
      break;
    default:
      break;  // nothing else is meant for a real server; newer messages are ignored
  }
}

namespace {

// The next frame of the session, reading as needed.
asio::awaitable<Result<std::vector<uint8_t>>> ReadFrame(asio::ip::tcp::socket& socket,
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

}  // namespace

// One attempt to register: the connection and what came of it.
struct Agent::Attempt {
  enum class Outcome { kRetry, kRegistered, kExit };
  Outcome outcome = Outcome::kRetry;
  std::unique_ptr<asio::ip::tcp::socket> socket;
  proto::FrameDecoder decoder{proto::kMaxEnvelopeBytes};
  std::vector<uint8_t> buf = std::vector<uint8_t>(64 * 1024);
  // The director's counters on this session, from its (nonce-proven) RegisterAck on.
  proto::ReplayGuard replay{1};
  int exit_code = 0;
  std::string exit_reason;
  bool handshake_timed_out = false;  // the handshake deadline closed the socket
};

void Agent::Problem(std::string_view kind, const std::string& text) {
  if (stopping_) return;  // Stop closed the attempt: not a problem with the director
  auto held = problems_.Admit(kind, clock_.Now());
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

asio::awaitable<void> Agent::Run(Agent* self) {
  auto backoff = 100ms;
  while (!self->stopping_) {
    Attempt a;
    co_await Register(self, a);
    self->attempt_socket_ = nullptr;
    if (self->stopping_) co_return;
    if (a.outcome == Attempt::Outcome::kRegistered) {
      backoff = 100ms;
      co_await Serve(self, a);
      if (self->exit_) {
        a.outcome = Attempt::Outcome::kExit;
        std::tie(a.exit_code, a.exit_reason) = *self->exit_;
      } else if (self->stopping_) {
        co_return;
      } else {
        self->counters_.sessions_lost.Add();
        spdlog::warn("control session to the director closed; registering again");
      }
    }
    if (a.outcome == Attempt::Outcome::kExit) {
      asio::error_code ignore;
      if (a.socket) a.socket->close(ignore);
      if (self->options_.on_exit) self->options_.on_exit(a.exit_code, a.exit_reason);
      co_return;
    }
    if (a.outcome == Attempt::Outcome::kRetry) {
      asio::error_code ignore;
      if (a.socket) a.socket->close(ignore);
    }
    self->retry_timer_.expires_after(backoff);
    co_await self->retry_timer_.async_wait(as_tuple(use_awaitable));
    if (a.outcome == Attempt::Outcome::kRetry) {
      backoff = std::min<std::chrono::milliseconds>(backoff * 2, 2s);
    }
  }
}

asio::awaitable<void> Agent::Register(Agent* self, Attempt& a) {
  a.socket = std::make_unique<asio::ip::tcp::socket>(self->io_);
  self->attempt_socket_ = a.socket.get();
  // Connect with a deadline: a timer closes the socket if the connect hangs.
  asio::steady_timer deadline(self->io_);
  deadline.expires_after(1s);
  asio::ip::tcp::socket* raw = a.socket.get();
  deadline.async_wait([raw](const asio::error_code& ec) {
    if (!ec) {
      asio::error_code ignore;
      raw->close(ignore);
    }
  });
  auto [cec] = co_await a.socket->async_connect(self->options_.director, as_tuple(use_awaitable));
  deadline.cancel();
  if (cec) {
    self->counters_.connect_failures.Add();
    self->Problem("connect", "cannot connect to the director at " + self->director_text_ + ": " +
                                 (cec == asio::error::operation_aborted ? "timed out after 1 s"
                                                                        : cec.message()) +
                                 "; is the director running, with its control port there "
                                 "(setting `director`)? retrying");
    co_return;
  }
  asio::error_code ignore;
  a.socket->set_option(asio::ip::tcp::no_delay(true), ignore);
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
  const std::string& at = self->director_text_;
  auto frame = co_await ReadFrame(*a.socket, a.decoder, a.buf);
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
  const std::string& at = self->director_text_;
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
    heartbeat_to_ = asio::ip::udp::endpoint(options_.director.address(),
                                            static_cast<uint16_t>(ack.heartbeat_port()));
    return;
  }
  counters_.refusals.Add();
  const std::string refused = "the director at " + director_text_ + " refused the registration";
  switch (ack.refusal()) {
    case proto::RegisterAck::REFUSAL_DUPLICATE_ID:
      a.outcome = Attempt::Outcome::kExit;
      a.exit_code = 1;
      a.exit_reason = refused + ": " + ack.reason();
      spdlog::error("{}; exiting with code 1 rather than take the id from a live server",
                    a.exit_reason);
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

asio::awaitable<void> Agent::Serve(Agent* self, Attempt& a) {
  self->counters_.registrations.Add();
  const uint64_t generation = ++self->generation_;
  auto session = std::make_shared<Session>(self->io_, std::move(a.socket), generation);
  self->session_ = session;
  if (self->options_.position) {
    const ReplicaPosition p = self->options_.position();
    spdlog::info("registered with director {} as {} (heartbeat every {} ms, applied seq {})",
                 self->director_text_, self->options_.id, self->interval_.count(), p.applied_seq);
  } else {
    spdlog::info("registered with director {} as {} (heartbeat every {} ms)", self->director_text_,
                 self->options_.id, self->interval_.count());
  }
  self->registered_ = true;
  if (!self->heartbeat_socket_) {
    self->heartbeat_socket_ = std::make_unique<asio::ip::udp::socket>(self->io_);
    self->heartbeat_socket_->open(asio::ip::udp::v4());
  }
  asio::co_spawn(self->io_, Writer(self, session), asio::detached);
  self->SendHeartbeat(false);  // at once: the first heartbeat makes the server ACTIVE
  asio::co_spawn(self->io_, HeartbeatLoop(self, generation), asio::detached);

  // Read the session until it breaks: frames already buffered after the RegisterAck first.
  for (;;) {
    auto frame = co_await ReadFrame(*session->socket, a.decoder, a.buf);
    if (!frame.ok()) {
      if (a.decoder.failed()) spdlog::error("control session: {}", frame.status().ToString());
      break;
    }
    auto opened = self->codec_.Open(*frame);
    if (!opened.ok()) {
      self->counters_.frames_dropped.Add();
      spdlog::warn("dropped a frame on the control session: {}", opened.status().ToString());
      continue;
    }
    if (!a.replay.Accept(opened->sender, opened->counter).ok()) {
      self->counters_.frames_dropped.Add();
      continue;
    }
    self->Dispatch(generation, opened->message);
  }
  self->registered_ = false;
  ++self->generation_;
  session->closing = true;
  session->wake.cancel();
  asio::error_code ignore;
  session->socket->close(ignore);
  if (self->session_ == session) self->session_.reset();
  if (self->options_.on_session_lost) self->options_.on_session_lost();
}

void Agent::SendHeartbeat(bool down) {
  if (!heartbeat_socket_) return;
  proto::Message m;
  proto::Heartbeat* hb = m.mutable_heartbeat();
  hb->set_id(options_.id);
  hb->set_incarnation(options_.incarnation);
  hb->set_counter(++heartbeat_counter_);
  proto::Load* load = hb->mutable_load();
  if (auto l = ReadLoadavg(); l.ok()) {
    // The reader itself is running while it reads; it is not load.
    load->set_run_queue(l->runnable > 0 ? l->runnable - 1 : 0);
  }
  load->set_in_flight(load_.in_flight());
  load->set_response_ms(load_.response_ms());
  uint32_t flags = down ? proto::Heartbeat::FLAG_DOWN : 0;
  if (options_.position) {
    const ReplicaPosition p = options_.position();
    hb->set_applied_seq(p.applied_seq);
    hb->set_digest(DigestBytes(p.digest));
    if (!p.healthy) flags |= proto::Heartbeat::FLAG_DOWN;  // the store is broken: no work
  }
  hb->set_flags(flags);
  std::vector<uint8_t> bytes = Sealed(m);
  asio::error_code ec;
  heartbeat_socket_->send_to(asio::buffer(bytes), heartbeat_to_, 0, ec);
  if (!ec) counters_.heartbeats_sent.Add();
}

asio::awaitable<void> Agent::HeartbeatLoop(Agent* self, uint64_t generation) {
  // One loop per session; a new session's expires_after wakes an old loop, which then ends.
  asio::steady_timer& timer = self->heartbeat_timer_;
  while (!self->stopping_ && self->generation_ == generation) {
    timer.expires_after(self->interval_);
    co_await timer.async_wait(as_tuple(use_awaitable));
    if (self->stopping_ || self->generation_ != generation) co_return;
    self->SendHeartbeat(false);
  }
}

void Agent::LeaveOnLoop(std::function<void()> done) {
  std::shared_ptr<Session> s = session_;
  heartbeat_timer_.cancel();
  if (registered_ && s && !s->writer_done) {
    SendHeartbeat(/*down=*/true);
    proto::Message m;
    m.mutable_deregister()->set_id(options_.id);
    m.mutable_deregister()->set_reason("real server stopping");
    Enqueue(s, m);
    s->closing = true;
    s->on_closed.push_back(std::move(done));
    s->wake.cancel();
  } else {
    // Not registered: connecting, in the handshake, or waiting to retry. End whichever it is.
    asio::error_code ignore;
    if (s) s->socket->close(ignore);
    if (attempt_socket_) attempt_socket_->close(ignore);
    retry_timer_.cancel();
    done();
  }
  // The heartbeat socket is closed when the io_context stops; the DOWN heartbeat is sent.
}

void Agent::Stop() {
  if (stopping_.exchange(true)) return;
  auto done = std::make_shared<std::promise<void>>();
  auto fut = done->get_future();
  asio::post(io_, [this, done] { LeaveOnLoop([done] { done->set_value(); }); });
  fut.wait_for(std::chrono::seconds(2));
}

}  // namespace vsc::realserver

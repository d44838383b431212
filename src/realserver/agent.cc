#include "realserver/agent.h"

#include <spdlog/spdlog.h>

#include <asio/experimental/as_tuple.hpp>
#include <future>

#include "net/endpoint.h"
#include "proto/frame.h"
#include "realserver/agent_attempt.h"
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
      directors_(options_.directors.size()),
      retry_timer_(io),
      heartbeat_timer_(io) {
  problems_.assign(options_.directors.size(), LogThrottle(std::chrono::seconds(5)));
}

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
      spdlog::info("director asks for a snapshot from {} ({}): {}", m.install_snapshot().peer_id(),
                   net::HostPort(m.install_snapshot().host(),
                                 static_cast<uint16_t>(m.install_snapshot().http_port())),
                   m.install_snapshot().reason());
      if (options_.on_install_snapshot) options_.on_install_snapshot(session, m.install_snapshot());
      break;
    case proto::Message::kRingTable:
      counters_.ring_tables.Add();
      if (options_.on_ring_table) options_.on_ring_table(m.ring_table().table());
      break;
    case proto::Message::kCommand:
      if (m.command().kind() == "removed") {
        // The director closes the session after this; Run then ends the agent.
        exit_.emplace(
            0, "removed by the operator (vsc adm remove) at the director " + director_text());
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

asio::awaitable<void> Agent::Run(Agent* self) {
  while (!self->stopping_) {
    Attempt a;
    co_await Register(self, a);
    self->attempt_socket_ = nullptr;
    if (self->stopping_) co_return;
    std::chrono::milliseconds wait{0};
    if (a.outcome == Attempt::Outcome::kRegistered) {
      self->directors_.OnRegistered();
      co_await Serve(self, a);
      if (self->exit_) {
        a.outcome = Attempt::Outcome::kExit;
        std::tie(a.exit_code, a.exit_reason) = *self->exit_;
      } else if (self->stopping_) {
        co_return;
      } else {
        self->counters_.sessions_lost.Add();
        spdlog::warn("control session to the director at {} closed; registering again",
                     self->director_text());
        wait = self->directors_.OnSessionLost(self->clock_.Now());
      }
    } else if (a.outcome == Attempt::Outcome::kRetry) {
      wait = self->directors_.OnFailure(a.standby, self->clock_.Now());
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
    if (wait.count() == 0) continue;  // the next director of the round, at once
    self->retry_timer_.expires_after(wait);
    co_await self->retry_timer_.async_wait(as_tuple(use_awaitable));
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
                 self->director_text(), self->options_.id, self->interval_.count(), p.applied_seq);
  } else {
    spdlog::info("registered with director {} as {} (heartbeat every {} ms)", self->director_text(),
                 self->options_.id, self->interval_.count());
  }
  self->registered_ = true;
  // Of the director's family: a list of directors may hold IPv4 and IPv6 addresses.
  if (!self->heartbeat_socket_ || self->heartbeat_to_.protocol() != self->heartbeat_protocol_) {
    self->heartbeat_protocol_ = self->heartbeat_to_.protocol();
    self->heartbeat_socket_ = std::make_unique<asio::ip::udp::socket>(self->io_);
    self->heartbeat_socket_->open(self->heartbeat_protocol_);
  }
  asio::co_spawn(self->io_, Writer(self, session), asio::detached);
  self->SendHeartbeat(false);  // at once: the first heartbeat makes the server ACTIVE
  asio::co_spawn(self->io_, HeartbeatLoop(self, generation), asio::detached);

  // Read the session until it breaks: frames already buffered after the RegisterAck first.
  for (;;) {
    auto frame = co_await ReadAgentFrame(*session->socket, a.decoder, a.buf);
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
  if (auto n = options_.run_queue.Read(); n.ok()) load->set_run_queue(*n);
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

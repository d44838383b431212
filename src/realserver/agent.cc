#include "realserver/agent.h"

#include <asio/experimental/as_tuple.hpp>

#include <spdlog/spdlog.h>

#include <future>

#include "proto/frame.h"
#include "realserver/replication_wire.h"

namespace vsc::realserver {
namespace {

using asio::experimental::as_tuple;
using asio::use_awaitable;
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
      load_(load),
      timer_(io) {}

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
    auto [ec, n] = co_await asio::async_write(*s->socket, asio::buffer(out), as_tuple(use_awaitable));
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
    case proto::Message::kCommand:
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
  auto backoff = 100ms;
  asio::steady_timer wait(self->io_);
  while (!self->stopping_) {
    auto socket = std::make_unique<asio::ip::tcp::socket>(self->io_);
    // Connect with a deadline: a timer closes the socket if the connect hangs.
    asio::steady_timer deadline(self->io_);
    deadline.expires_after(1s);
    asio::ip::tcp::socket* raw = socket.get();
    deadline.async_wait([raw](const asio::error_code& ec) {
      if (!ec) {
        asio::error_code ignore;
        raw->close(ignore);
      }
    });
    auto [cec] = co_await socket->async_connect(self->options_.director, as_tuple(use_awaitable));
    deadline.cancel();
    if (cec) {
      self->counters_.connect_failures.Add();
      wait.expires_after(backoff);
      co_await wait.async_wait(as_tuple(use_awaitable));
      backoff = std::min<std::chrono::milliseconds>(backoff * 2, 2s);
      continue;
    }
    socket->set_option(asio::ip::tcp::no_delay(true));

    proto::Message m;
    proto::Register* reg = m.mutable_register_();
    reg->set_id(self->options_.id);
    reg->set_incarnation(self->options_.incarnation);
    reg->set_weight(self->options_.weight);
    for (const auto& e : self->options_.endpoints) *reg->add_endpoints() = e;
    for (const auto& c : self->options_.capabilities) reg->add_capabilities(c);
    if (self->options_.position) {
      const ReplicaPosition p = self->options_.position();
      reg->set_applied_seq(p.applied_seq);
      reg->set_digest(DigestBytes(p.digest));
      if (p.applied_seq == 0) reg->set_content_checksum(p.content_checksum);
    }
    // No session writer exists yet: this is the only write until registration is accepted.
    std::vector<uint8_t> out;
    proto::AppendFrame(out, self->Sealed(m));
    auto [wec, wn] = co_await asio::async_write(*socket, asio::buffer(out), as_tuple(use_awaitable));
    (void)wn;

    proto::FrameDecoder decoder(proto::kMaxEnvelopeBytes);
    std::vector<uint8_t> buf(64 * 1024);
    bool accepted = false;
    asio::error_code rec = wec;
    while (!rec && !accepted) {
      auto frame = decoder.Next();
      if (!frame.ok()) {
        rec = asio::error::invalid_argument;
        break;
      }
      if (!frame->has_value()) {
        auto [ec, n] = co_await socket->async_read_some(asio::buffer(buf), as_tuple(use_awaitable));
        rec = ec;
        if (!ec) decoder.Feed(std::span<const uint8_t>(buf.data(), n));
        continue;
      }
      auto opened = self->codec_.Open(**frame);
      if (!opened.ok() || !opened->message.has_register_ack()) {
        spdlog::error("director sent an unreadable answer to registration: {}",
                      opened.ok() ? "not a RegisterAck" : opened.status().ToString());
        rec = asio::error::invalid_argument;
        break;
      }
      (void)self->replay_.Accept(opened->sender, opened->counter);
      const proto::RegisterAck& ack = opened->message.register_ack();
      if (!ack.accepted()) {
        self->counters_.refusals.Add();
        spdlog::error("director refused registration: {}", ack.reason());
        rec = asio::error::connection_refused;
        break;
      }
      accepted = true;
      self->interval_ = std::chrono::milliseconds(std::max<uint32_t>(ack.heartbeat_interval_ms(), 10));
      self->heartbeat_to_ = asio::ip::udp::endpoint(self->options_.director.address(),
                                                    static_cast<uint16_t>(ack.heartbeat_port()));
    }
    if (!accepted) {
      asio::error_code ignore;
      socket->close(ignore);
      wait.expires_after(backoff);
      co_await wait.async_wait(as_tuple(use_awaitable));
      backoff = std::min<std::chrono::milliseconds>(backoff * 2, 2s);
      continue;
    }
    backoff = 100ms;
    self->counters_.registrations.Add();
    const uint64_t generation = ++self->generation_;
    auto session = std::make_shared<Session>(self->io_, std::move(socket), generation);
    self->session_ = session;
    if (self->options_.position) {
      const ReplicaPosition p = self->options_.position();
      spdlog::info("registered with director {}:{} as {} (heartbeat every {} ms, applied seq {})",
                   self->options_.director.address().to_string(), self->options_.director.port(),
                   self->options_.id, self->interval_.count(), p.applied_seq);
    } else {
      spdlog::info("registered with director {}:{} as {} (heartbeat every {} ms)",
                   self->options_.director.address().to_string(), self->options_.director.port(),
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
      auto frame = decoder.Next();
      if (!frame.ok()) {
        spdlog::error("control session: {}; reconnecting", frame.status().ToString());
        break;
      }
      if (!frame->has_value()) {
        auto [ec, n] = co_await session->socket->async_read_some(asio::buffer(buf),
                                                                 as_tuple(use_awaitable));
        if (ec) break;
        decoder.Feed(std::span<const uint8_t>(buf.data(), n));
        continue;
      }
      auto opened = self->codec_.Open(**frame);
      if (!opened.ok()) {
        self->counters_.frames_dropped.Add();
        spdlog::warn("dropped a frame on the control session: {}", opened.status().ToString());
        continue;
      }
      if (!self->replay_.Accept(opened->sender, opened->counter).ok()) {
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
    if (self->stopping_) co_return;
    self->counters_.sessions_lost.Add();
    spdlog::warn("control session to the director closed; registering again");
    wait.expires_after(backoff);
    co_await wait.async_wait(as_tuple(use_awaitable));
  }
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
  asio::steady_timer timer(self->io_);
  while (!self->stopping_ && self->generation_ == generation) {
    timer.expires_after(self->interval_);
    co_await timer.async_wait(as_tuple(use_awaitable));
    if (self->stopping_ || self->generation_ != generation) co_return;
    self->SendHeartbeat(false);
  }
}

void Agent::LeaveOnLoop(std::function<void()> done) {
  std::shared_ptr<Session> s = session_;
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
    asio::error_code ignore;
    if (s) s->socket->close(ignore);
    done();
  }
  // The heartbeat socket is closed when the io_context stops; the DOWN heartbeat is sent.
}

void Agent::Stop() {
  if (stopping_.exchange(true)) return;
  auto done = std::make_shared<std::promise<void>>();
  auto fut = done->get_future();
  asio::post(io_, [this, done] {
    LeaveOnLoop([done] { done->set_value(); });
  });
  fut.wait_for(std::chrono::seconds(2));
}

}  // namespace vsc::realserver

#include "realserver/agent.h"

#include <asio/experimental/as_tuple.hpp>

#include <spdlog/spdlog.h>

#include <future>

#include "proto/frame.h"

namespace vsc::realserver {
namespace {

using asio::experimental::as_tuple;
using asio::use_awaitable;
using namespace std::chrono_literals;

}  // namespace

Agent::Agent(asio::io_context& io, AgentOptions options, const proto::ClusterKey& key,
             const Clock& clock, LoadTracker& load)
    : io_(io),
      options_(std::move(options)),
      codec_(key),
      counter_(clock.WallMicros()),
      clock_(clock),
      load_(load),
      timer_(io) {}

void Agent::Start() { asio::co_spawn(io_, Run(this), asio::detached); }

std::vector<uint8_t> Agent::Sealed(const proto::Message& m) {
  return codec_.Seal(options_.id, counter_.Next(), m);
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
    std::vector<uint8_t> out;
    proto::AppendFrame(out, self->Sealed(m));
    auto [wec, wn] = co_await asio::async_write(*socket, asio::buffer(out), as_tuple(use_awaitable));
    (void)wn;

    proto::FrameDecoder decoder(64 * 1024);
    std::array<uint8_t, 4096> buf;
    bool accepted = false;
    asio::error_code rec = wec;
    while (!rec && !accepted) {
      auto [ec, n] = co_await socket->async_read_some(asio::buffer(buf), as_tuple(use_awaitable));
      rec = ec;
      if (ec) break;
      decoder.Feed(std::span<const uint8_t>(buf.data(), n));
      auto frame = decoder.Next();
      if (!frame.ok()) {
        rec = asio::error::invalid_argument;
        break;
      }
      if (!frame->has_value()) continue;
      auto opened = self->codec_.Open(**frame);
      if (!opened.ok() || !opened->message.has_register_ack()) {
        spdlog::error("director sent an unreadable answer to registration: {}",
                      opened.ok() ? "not a RegisterAck" : opened.status().ToString());
        rec = asio::error::invalid_argument;
        break;
      }
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
    spdlog::info("registered with director {}:{} as {} (heartbeat every {} ms)",
                 self->options_.director.address().to_string(), self->options_.director.port(),
                 self->options_.id, self->interval_.count());
    self->registered_ = true;
    if (!self->heartbeat_socket_) {
      self->heartbeat_socket_ = std::make_unique<asio::ip::udp::socket>(self->io_);
      self->heartbeat_socket_->open(asio::ip::udp::v4());
    }
    self->session_ = std::move(socket);
    const uint64_t generation = ++self->generation_;
    self->SendHeartbeat(false);  // at once: the first heartbeat makes the server ACTIVE
    asio::co_spawn(self->io_, HeartbeatLoop(self, generation), asio::detached);

    // Hold the session until it breaks. The director sends nothing we must act on today
    // (commands are notices), but reading is how a closed session is seen.
    for (;;) {
      auto [ec, n] = co_await self->session_->async_read_some(asio::buffer(buf), as_tuple(use_awaitable));
      if (ec) break;
      (void)n;
    }
    self->registered_ = false;
    ++self->generation_;
    if (self->stopping_) co_return;
    self->counters_.sessions_lost.Add();
    spdlog::warn("control session to the director lost; reconnecting");
    asio::error_code ignore;
    self->session_->close(ignore);
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
  hb->set_flags(down ? proto::Heartbeat::FLAG_DOWN : 0);
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

void Agent::LeaveOnLoop() {
  if (registered_) {
    SendHeartbeat(/*down=*/true);
    proto::Message m;
    m.mutable_deregister()->set_id(options_.id);
    m.mutable_deregister()->set_reason("real server stopping");
    std::vector<uint8_t> out;
    proto::AppendFrame(out, Sealed(m));
    asio::error_code ec;
    asio::write(*session_, asio::buffer(out), ec);
  }
  asio::error_code ignore;
  if (session_) session_->close(ignore);
  if (heartbeat_socket_) heartbeat_socket_->close(ignore);
}

void Agent::Stop() {
  if (stopping_.exchange(true)) return;
  auto done = std::make_shared<std::promise<void>>();
  auto fut = done->get_future();
  asio::post(io_, [this, done] {
    LeaveOnLoop();
    done->set_value();
  });
  fut.wait_for(std::chrono::seconds(2));
}

}  // namespace vsc::realserver

#include "director/control_server.h"

#include <asio/experimental/as_tuple.hpp>

#include <spdlog/spdlog.h>

#include "director/outbox.h"
#include "net/tcp_listener.h"
#include "proto/frame.h"

namespace vsc::director {
namespace {

// Acks of large applied batches carry one outcome per entry.
constexpr size_t kMaxControlFrame = proto::kMaxEnvelopeBytes;
constexpr size_t kMaxHeartbeat = 2048;

}  // namespace

ControlServer::ControlServer(asio::io_context& io, ControlPlane& plane,
                             const proto::ClusterKey& key, const Clock& clock, Publisher publish)
    : io_(io),
      plane_(plane),
      codec_(key),
      counter_(clock.WallMicros()),
      clock_(clock),
      publish_(std::move(publish)) {}

Status ControlServer::Start(const asio::ip::tcp::endpoint& control,
                            const asio::ip::udp::endpoint& heartbeat) {
  auto listener = net::TcpListener::Listen(io_, control, /*reuse_port=*/false);
  if (!listener.ok()) return listener.status().Annotate("control port");
  listener_ = std::move(listener).value();
  control_port_ = listener_->local_port();

  asio::error_code ec;
  heartbeat_socket_ = std::make_unique<asio::ip::udp::socket>(io_);
  heartbeat_socket_->open(heartbeat.protocol(), ec);
  if (!ec) heartbeat_socket_->bind(heartbeat, ec);
  if (ec) {
    return IoError("heartbeat port " + heartbeat.address().to_string() + ":" +
                   std::to_string(heartbeat.port()) + ": " + ec.message());
  }
  heartbeat_port_ = heartbeat_socket_->local_endpoint().port();
  tick_timer_ = std::make_unique<asio::steady_timer>(io_);

  listener_->Start([this](asio::ip::tcp::socket socket) {
    asio::co_spawn(io_, Session(this, std::move(socket)), asio::detached);
  });
  asio::co_spawn(io_, HeartbeatLoop(this), asio::detached);
  asio::co_spawn(io_, TickLoop(this), asio::detached);
  PublishIfNeeded(true);
  return Status::Ok();
}

void ControlServer::Stop() {
  stopping_ = true;
  asio::error_code ec;
  if (listener_) listener_->Stop();
  if (heartbeat_socket_) heartbeat_socket_->close(ec);
  if (tick_timer_) tick_timer_->cancel();
  for (auto& [id, socket] : sessions_) socket->close(ec);
}

std::optional<proto::Opened> ControlServer::Accept(std::span<const uint8_t> bytes) {
  auto opened = codec_.Open(bytes);
  if (!opened.ok()) {
    if (opened.status().code() == Code::kUnauthenticated) {
      counters_.dropped_unauthenticated.Add();
    } else {
      counters_.dropped_malformed.Add();
    }
    return std::nullopt;
  }
  if (!replay_.Accept(opened->sender, opened->counter).ok()) {
    counters_.dropped_replayed.Add();
    return std::nullopt;
  }
  return std::move(opened).value();
}

void ControlServer::PublishIfNeeded(bool force) {
  const TimePoint now = clock_.Now();
  if (!force) {
    if (!plane_.NeedsPublish()) return;
    // Membership and operator changes are published at once; load-only changes at most once
    // per heartbeat period.
    if (!plane_.StructureChanged() &&
        now - last_load_publish_ < plane_.membership().config().heartbeat_interval) {
      return;
    }
  }
  last_load_publish_ = now;
  counters_.views_published.Add();
  publish_(plane_.BuildView());
}

std::vector<uint8_t> ControlServer::SealFrame(const proto::Message& message) {
  std::vector<uint8_t> out;
  auto sealed = codec_.TrySeal("director", counter_.Next(), message);
  if (!sealed.ok()) {
    spdlog::error("cannot send a control message: {}", sealed.status().ToString());
    return out;
  }
  proto::AppendFrame(out, *sealed);
  return out;
}

// The replicator's handle on one session: messages are sealed here and queued for the
// session's writer.
class SessionLink final : public ReplicaLink {
 public:
  SessionLink(ControlServer* server, std::shared_ptr<Outbox> outbox)
      : server_(server), outbox_(std::move(outbox)) {}
  void Send(const proto::Message& message) override {
    if (outbox_->closed()) return;
    std::vector<uint8_t> frame = server_->SealFrame(message);
    if (!frame.empty()) outbox_->Push(frame);
  }

 private:
  ControlServer* server_;
  std::shared_ptr<Outbox> outbox_;
};

asio::awaitable<void> ControlServer::Session(ControlServer* self, asio::ip::tcp::socket socket) {
  auto shared = std::make_shared<asio::ip::tcp::socket>(std::move(socket));
  auto outbox = std::make_shared<Outbox>(shared);
  asio::co_spawn(self->io_, Outbox::Run(outbox), asio::detached);
  std::shared_ptr<SessionLink> link;
  self->counters_.sessions_opened.Add();
  proto::FrameDecoder decoder(kMaxControlFrame);
  std::array<uint8_t, 16 * 1024> buf;
  std::string id;
  uint64_t incarnation = 0;
  bool registered = false;
  bool refused = false;  // the refusal is being written; ignore whatever else arrives
  for (;;) {
    auto [ec, n] = co_await shared->async_read_some(
        asio::buffer(buf), asio::experimental::as_tuple(asio::use_awaitable));
    if (ec) break;
    if (refused) continue;
    decoder.Feed(std::span<const uint8_t>(buf.data(), n));
    bool close = false;
    for (;;) {
      auto frame = decoder.Next();
      if (!frame.ok()) {
        self->counters_.dropped_oversize.Add();
        close = true;
        break;
      }
      if (!frame->has_value()) break;
      auto opened = self->Accept(**frame);
      if (!opened) {
        close = true;  // a session that sends one bad message is not trusted with more
        break;
      }
      const proto::Message& m = opened->message;
      if (m.has_register_()) {
        const proto::Register& reg = m.register_();
        if (reg.id() != opened->sender || (registered && id != reg.id())) {
          self->counters_.dropped_malformed.Add();
          close = true;  // one server per session, speaking for itself
          break;
        }
        Admission admission;
        if (self->replicator_ != nullptr) admission = self->replicator_->Admit(reg);
        proto::RegisterAck ack = self->plane_.OnRegister(
            reg, self->heartbeat_port_, self->clock_.Now(), admission.needs_catch_up());
        proto::Message reply;
        *reply.mutable_register_ack() = ack;
        outbox->Push(self->SealFrame(reply));
        if (!ack.accepted()) {
          self->counters_.registrations_refused.Add();
          outbox->CloseWhenDrained();
          refused = true;
          break;
        }
        if (registered && self->replicator_ != nullptr) {
          self->replicator_->Detach(id, link.get());  // a re-registration restarts the stream
        }
        id = reg.id();
        incarnation = reg.incarnation();
        registered = true;
        if (auto it = self->sessions_.find(id); it != self->sessions_.end() && it->second != shared) {
          asio::error_code ignore;
          it->second->close(ignore);  // a newer session of the same server replaces the old one
        }
        self->sessions_[id] = shared;
        if (self->replicator_ != nullptr) {
          link = std::make_shared<SessionLink>(self, outbox);
          self->replicator_->Attach(reg, admission, link);
        }
        self->PublishIfNeeded();
      } else if (m.has_replica_ack()) {
        if (!registered || self->replicator_ == nullptr) {
          self->counters_.dropped_malformed.Add();
          continue;
        }
        self->replicator_->OnAck(id, m.replica_ack());
      } else if (m.has_deregister()) {
        if (registered) {
          spdlog::info("{} deregisters: {}", id, m.deregister().reason());
        }
        close = true;
        break;
      } else {
        self->counters_.dropped_malformed.Add();
      }
    }
    if (close) break;
  }
  outbox->Close();
  asio::error_code ignore;
  shared->close(ignore);
  self->counters_.sessions_closed.Add();
  if (registered) {
    // A session replaced by a newer one of the same server (a reconnect under the same
    // incarnation, e.g. after a snapshot install) must not mark that server DOWN.
    bool current = false;
    if (auto it = self->sessions_.find(id); it != self->sessions_.end() && it->second == shared) {
      self->sessions_.erase(it);
      current = true;
    }
    if (!self->stopping_ && current) {
      if (self->replicator_ != nullptr) self->replicator_->Detach(id, link.get());
      self->plane_.OnSessionClosed(id, incarnation, self->clock_.Now());
      self->PublishIfNeeded();
    }
  }
}

asio::awaitable<void> ControlServer::HeartbeatLoop(ControlServer* self) {
  std::array<uint8_t, kMaxHeartbeat> buf;
  asio::ip::udp::endpoint from;
  while (!self->stopping_) {
    auto [ec, n] = co_await self->heartbeat_socket_->async_receive_from(
        asio::buffer(buf), from, asio::experimental::as_tuple(asio::use_awaitable));
    if (ec) {
      if (self->stopping_ || ec == asio::error::operation_aborted) co_return;
      continue;
    }
    auto opened = self->Accept(std::span<const uint8_t>(buf.data(), n));
    if (!opened) continue;
    if (!opened->message.has_heartbeat() || opened->message.heartbeat().id() != opened->sender) {
      self->counters_.dropped_malformed.Add();
      continue;
    }
    self->counters_.heartbeats_received.Add();
    self->plane_.OnHeartbeat(opened->message.heartbeat(), self->clock_.Now());
    self->PublishIfNeeded();
  }
}

asio::awaitable<void> ControlServer::TickLoop(ControlServer* self) {
  const Duration period = self->plane_.membership().config().heartbeat_interval / 4;
  while (!self->stopping_) {
    self->tick_timer_->expires_after(period);
    auto [ec] = co_await self->tick_timer_->async_wait(
        asio::experimental::as_tuple(asio::use_awaitable));
    (void)ec;  // cancelled only by Stop, which stopping_ reports
    if (self->stopping_) co_return;
    for (const std::string& id : self->plane_.Tick(self->clock_.Now())) {
      if (auto it = self->sessions_.find(id); it != self->sessions_.end()) {
        asio::error_code ignore;
        it->second->close(ignore);
      }
    }
    self->PublishIfNeeded();
  }
}

}  // namespace vsc::director

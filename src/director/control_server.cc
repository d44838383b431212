#include "director/control_server.h"

#include <spdlog/spdlog.h>

#include <asio/experimental/as_tuple.hpp>

#include "director/auth_refusal.h"
#include "director/outbox.h"
#include "net/tcp_listener.h"
#include "proto/frame.h"
#include "proto/session_frames.h"

namespace vsc::director {
namespace {

// Acks of large applied batches carry one outcome per entry.
constexpr size_t kMaxControlFrame = proto::kMaxEnvelopeBytes;
constexpr size_t kMaxHeartbeat = 2048;

}  // namespace

std::string HeartbeatSender(std::string_view id, uint64_t incarnation) {
  return std::string(id) + "/" + std::to_string(incarnation);
}

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
  for (auto& [id, session] : sessions_) session.socket->close(ec);
}

Result<proto::Opened> ControlServer::Open(std::span<const uint8_t> bytes) {
  auto opened = codec_.Open(bytes);
  if (!opened.ok()) {
    if (opened.status().code() == Code::kUnauthenticated) {
      counters_.dropped_unauthenticated.Add();
    } else {
      counters_.dropped_malformed.Add();
    }
  }
  return opened;
}

void ControlServer::PublishIfNeeded(bool force) {
  if (ring_ != nullptr && ring_->Update(plane_.membership())) {
    const std::vector<uint8_t> frame = RingTableFrame();
    for (auto& [id, session] : sessions_) {
      session.outbox->Push(frame);
      counters_.ring_tables_sent.Add();
    }
  }
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

namespace {

std::vector<uint8_t> FrameSealed(const Result<std::vector<uint8_t>>& sealed) {
  std::vector<uint8_t> out;
  if (!sealed.ok()) {
    spdlog::error("cannot send a control message: {}", sealed.status().ToString());
    return out;
  }
  proto::AppendFrame(out, *sealed);
  return out;
}

}  // namespace

std::vector<uint8_t> ControlServer::SealFrame(const proto::Message& message) {
  return FrameSealed(codec_.TrySeal("director", counter_.Next(), message));
}

std::vector<uint8_t> ControlServer::SealEncodedFrame(std::string_view message) {
  return FrameSealed(codec_.TrySealEncoded("director", counter_.Next(), message));
}

std::vector<uint8_t> ControlServer::RingTableFrame() {
  proto::Message m;
  m.mutable_ring_table()->set_table(std::string(ring_->table().begin(), ring_->table().end()));
  return SealFrame(m);
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
  void SendEncoded(std::string_view message) override {
    if (outbox_->closed()) return;
    std::vector<uint8_t> frame = server_->SealEncodedFrame(message);
    if (!frame.empty()) outbox_->Push(frame);
  }

 private:
  ControlServer* server_;
  std::shared_ptr<Outbox> outbox_;
};

// One control session's state, owned by its Session coroutine.
struct ControlServer::SessionState {
  uint64_t number = 0;
  proto::Nonce nonce{};
  std::string peer;  // "host:port", for logs
  std::shared_ptr<asio::ip::tcp::socket> socket;
  std::shared_ptr<Outbox> outbox;
  std::shared_ptr<SessionLink> link;
  proto::ReplayGuard replay{1};  // counters of this session's frames
  std::string id;
  bool registered = false;
};

asio::awaitable<void> ControlServer::Session(ControlServer* self, asio::ip::tcp::socket socket) {
  SessionState st;
  st.number = ++self->next_session_;
  st.nonce = proto::NewNonce();
  st.peer = PeerText(socket);
  st.socket = std::make_shared<asio::ip::tcp::socket>(std::move(socket));
  st.outbox = std::make_shared<Outbox>(st.socket);
  asio::co_spawn(self->io_, Outbox::Run(st.outbox), asio::detached);
  self->counters_.sessions_opened.Add();
  st.outbox->Push(proto::ChallengeFrame(st.nonce));
  proto::FrameDecoder decoder(kMaxControlFrame);
  std::array<uint8_t, 16 * 1024> buf;
  Next next = Next::kContinue;
  while (next != Next::kClose) {
    auto [ec, n] = co_await st.socket->async_read_some(
        asio::buffer(buf), asio::experimental::as_tuple(asio::use_awaitable));
    if (ec) break;
    if (next == Next::kRefused) continue;  // the refusal is being written; ignore the rest
    decoder.Feed(std::span<const uint8_t>(buf.data(), n));
    for (;;) {
      auto frame = decoder.Next();
      if (!frame.ok()) {
        self->counters_.dropped_oversize.Add();
        next = self->RefuseUnauthenticated(st, "frame over the size limit");
        break;
      }
      if (!frame->has_value()) break;
      next = self->OnSessionFrame(st, **frame);
      if (next != Next::kContinue) break;
    }
  }
  self->EndSession(st);
}

ControlServer::Next ControlServer::OnSessionFrame(SessionState& st,
                                                  std::span<const uint8_t> frame) {
  auto opened = Open(frame);
  if (!opened.ok()) {
    return RefuseUnauthenticated(st, opened.status().code() == Code::kUnauthenticated
                                         ? "authentication failed (wrong cluster key?)"
                                         : "not a vsc envelope, or an undecodable one");
  }
  const proto::Message& m = opened->message;
  // A session is trusted once its Register carried this session's nonce: nothing recorded
  // elsewhere can be replayed into it, whatever the sender's clock did.
  if (!st.registered &&
      (!m.has_register_() || m.register_().challenge() != proto::NonceString(st.nonce))) {
    counters_.dropped_replayed.Add();
    return RefuseUnauthenticated(
        st,
        "the first message is not a Register sealed for this session's challenge (a replay, "
        "or a real server of an older version)");
  }
  if (st.registered && opened->sender != st.id) {
    counters_.dropped_malformed.Add();
    return Next::kClose;  // one server per session, speaking for itself
  }
  if (!st.replay.Accept(opened->sender, opened->counter).ok()) {
    counters_.dropped_replayed.Add();
    return RefuseUnauthenticated(st, "a frame repeated a counter (replay)");
  }
  if (m.has_register_()) {
    if (m.register_().id() != opened->sender) {
      counters_.dropped_malformed.Add();
      return Next::kClose;
    }
    return OnRegister(st, m.register_());
  }
  if (m.has_replica_ack()) {
    if (!st.registered || replicator_ == nullptr) {
      counters_.dropped_malformed.Add();
      return Next::kContinue;
    }
    replicator_->OnAck(st.id, m.replica_ack());
    return Next::kContinue;
  }
  if (m.has_deregister()) {
    if (st.registered) spdlog::info("{} deregisters: {}", st.id, m.deregister().reason());
    return Next::kClose;
  }
  counters_.dropped_malformed.Add();
  return Next::kContinue;
}

ControlServer::Next ControlServer::OnRegister(SessionState& st, const proto::Register& reg) {
  if (standby_for_ && !floating_vip_) return RefuseStandby(st, reg, *standby_for_);
  if (standby_for_ && !standby_accepting_logged_) {
    standby_accepting_logged_ = true;
    spdlog::warn(
        "standby: accepting the registration of '{}' on the floating VIP, which keepalived moved "
        "here while {} holds the sequencer lease: lookups are served now, writes wait for the "
        "lease",
        reg.id(), *standby_for_);
  }
  Admission admission;
  if (replicator_ != nullptr) admission = replicator_->Admit(reg);
  const membership::ServerRecord* before = plane_.membership().Find(reg.id());
  const bool known = before != nullptr;
  const uint64_t old_incarnation = known ? before->reg.incarnation : 0;
  proto::RegisterAck ack =
      plane_.OnRegister(reg, st.number, heartbeat_port_, clock_.Now(), admission.needs_catch_up());
  proto::Message reply;
  *reply.mutable_register_ack() = ack;
  st.outbox->Push(SealFrame(reply));
  if (!ack.accepted()) {
    counters_.registrations_refused.Add();
    st.outbox->CloseWhenDrained();
    return Next::kRefused;
  }
  if (known && old_incarnation != reg.incarnation()) {
    // The old process's heartbeat window is of no more use: its heartbeats are stale now.
    heartbeat_replay_.Forget(HeartbeatSender(reg.id(), old_incarnation));
  }
  if (st.registered && replicator_ != nullptr) {
    replicator_->Detach(st.id, st.link.get());  // a re-registration restarts the stream
  }
  st.id = reg.id();
  st.registered = true;
  if (auto it = sessions_.find(st.id); it != sessions_.end() && it->second.number != st.number) {
    asio::error_code ignore;
    it->second.socket->close(ignore);  // the same process reconnected: its old session is dead
  }
  sessions_[st.id] = OpenSession{st.socket, st.outbox, st.number};
  if (ring_ != nullptr) {
    st.outbox->Push(RingTableFrame());
    counters_.ring_tables_sent.Add();
  }
  if (replicator_ != nullptr) {
    st.link = std::make_shared<SessionLink>(this, st.outbox);
    replicator_->Attach(reg, admission, st.link);
  }
  PublishIfNeeded();
  return Next::kContinue;
}

ControlServer::Next ControlServer::RefuseStandby(SessionState& st, const proto::Register& reg,
                                                 const std::string& holder) {
  const std::string why =
      "this director is a standby: " + holder + " holds the sequencer lease; register with it";
  if (auto held = standby_log_.Admit("standby", clock_.Now())) {
    spdlog::info("registration of '{}' refused: {}{}", reg.id(), why,
                 *held == 0 ? "" : fmt::format(" ({} more since the last report)", *held));
  }
  proto::Message reply;
  *reply.mutable_register_ack() = plane_.Refuse(reg, proto::RegisterAck::REFUSAL_STANDBY, why);
  st.outbox->Push(SealFrame(reply));
  counters_.registrations_refused.Add();
  st.outbox->CloseWhenDrained();
  return Next::kRefused;
}

void ControlServer::SetStandby(const std::optional<std::string>& holder) {
  const bool was = standby_for_.has_value();
  standby_for_ = holder;
  if (!holder) standby_accepting_logged_ = false;
  if (!holder || was) return;
  spdlog::warn(
      "{} holds the sequencer lease: this director is a standby; closing {} control sessions so "
      "their real servers register with it",
      *holder, sessions_.size());
  for (auto& [id, open] : sessions_) {
    asio::error_code ignore;
    open.socket->close(ignore);
  }
}

ControlServer::Next ControlServer::RefuseUnauthenticated(SessionState& st, const std::string& why) {
  director::RefuseUnauthenticated(*st.outbox, auth_log_, clock_.Now(), "control", st.peer, why);
  return Next::kRefused;
}

void ControlServer::EndSession(SessionState& st) {
  st.outbox->Close();
  asio::error_code ignore;
  st.socket->close(ignore);
  counters_.sessions_closed.Add();
  if (!st.registered) return;
  // A session replaced by a newer one of the same process must not detach the newer stream;
  // the ControlPlane likewise ignores the close of a session that no longer holds the id.
  bool current = false;
  if (auto it = sessions_.find(st.id); it != sessions_.end() && it->second.number == st.number) {
    sessions_.erase(it);
    current = true;
  }
  if (stopping_) return;
  if (current && replicator_ != nullptr) replicator_->Detach(st.id, st.link.get());
  plane_.OnSessionClosed(st.id, st.number, clock_.Now());
  PublishIfNeeded();
}

Status ControlServer::RemoveServer(const std::string& id) {
  const membership::ServerRecord* rec = plane_.membership().Find(id);
  const uint64_t incarnation = rec != nullptr ? rec->reg.incarnation : 0;
  VSC_RETURN_IF_ERROR(plane_.Remove(id, clock_.Now()));
  heartbeat_replay_.Forget(HeartbeatSender(id, incarnation));
  if (auto it = sessions_.find(id); it != sessions_.end()) {
    proto::Message m;
    m.mutable_command()->set_kind("removed");
    it->second.outbox->Push(SealFrame(m));
    it->second.outbox->CloseWhenDrained();
    spdlog::info("{} removed by the operator; told its process and closed its control session", id);
  }
  PublishIfNeeded();
  return Status::Ok();
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
    auto opened = self->Open(std::span<const uint8_t>(buf.data(), n));
    if (!opened.ok()) continue;  // counted; silent towards the sender (no amplification)
    if (!opened->message.has_heartbeat() || opened->message.heartbeat().id() != opened->sender) {
      self->counters_.dropped_malformed.Add();
      continue;
    }
    const proto::Heartbeat& hb = opened->message.heartbeat();
    if (!self->heartbeat_replay_.Accept(HeartbeatSender(hb.id(), hb.incarnation()), opened->counter)
             .ok()) {
      self->counters_.dropped_replayed.Add();
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
    auto [ec] =
        co_await self->tick_timer_->async_wait(asio::experimental::as_tuple(asio::use_awaitable));
    (void)ec;  // cancelled only by Stop, which stopping_ reports
    if (self->stopping_) co_return;
    for (const std::string& id : self->plane_.Tick(self->clock_.Now())) {
      if (auto it = self->sessions_.find(id); it != self->sessions_.end()) {
        asio::error_code ignore;
        it->second.socket->close(ignore);
      }
    }
    self->PublishIfNeeded();
  }
}

}  // namespace vsc::director

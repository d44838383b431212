#include "director/write_server.h"

#include <spdlog/spdlog.h>

#include <asio/experimental/as_tuple.hpp>

#include "director/auth_refusal.h"
#include "director/outbox.h"
#include "net/tcp_listener.h"
#include "proto/frame.h"

namespace vsc::director {

WriteServer::WriteServer(asio::io_context& io, const proto::ClusterKey& key, const Clock& clock,
                         Replicator& replicator)
    : io_(io), codec_(key), counter_(clock.WallMicros()), clock_(clock), replicator_(replicator) {}

Result<std::unique_ptr<net::TcpListener>> WriteServer::Bind(
    asio::io_context& io, const asio::ip::tcp::endpoint& endpoint) {
  auto listener = net::TcpListener::Listen(io, endpoint, /*reuse_port=*/false);
  if (!listener.ok()) return listener.status().Annotate("write port");
  return std::move(listener).value();
}

void WriteServer::Start(std::unique_ptr<net::TcpListener> listener) {
  listener_ = std::move(listener);
  port_ = listener_->local_port();
  listener_->Start([this](asio::ip::tcp::socket socket) {
    asio::error_code ignore;
    socket.set_option(asio::ip::tcp::no_delay(true), ignore);
    asio::co_spawn(io_, Session(this, std::move(socket)), asio::detached);
  });
}

void WriteServer::Stop() {
  stopping_ = true;
  asio::error_code ec;
  if (listener_) listener_->Stop();
  for (const auto& socket : sessions_) socket->close(ec);
}

void WriteServer::Refuse(Outbox& outbox, const asio::ip::tcp::socket& socket,
                         const std::string& why) {
  RefuseUnauthenticated(outbox, auth_log_, clock_.Now(), "write", PeerText(socket), why);
}

asio::awaitable<void> WriteServer::Session(WriteServer* self, asio::ip::tcp::socket socket) {
  auto shared = std::make_shared<asio::ip::tcp::socket>(std::move(socket));
  self->sessions_.insert(shared);
  self->counters_.sessions_opened.Add();
  auto outbox = std::make_shared<Outbox>(shared);
  asio::co_spawn(self->io_, Outbox::Run(outbox), asio::detached);
  proto::FrameDecoder decoder(proto::kMaxEnvelopeBytes);
  std::vector<uint8_t> buf(64 * 1024);
  bool close = false;
  bool refused = false;  // the auth-failed frame is being written; ignore the rest
  while (!close) {
    auto [ec, n] = co_await shared->async_read_some(
        asio::buffer(buf), asio::experimental::as_tuple(asio::use_awaitable));
    if (ec) break;
    if (refused) continue;
    decoder.Feed(std::span<const uint8_t>(buf.data(), n));
    for (;;) {
      auto frame = decoder.Next();
      if (!frame.ok()) {
        self->counters_.dropped_oversize.Add();
        close = true;
        break;
      }
      if (!frame->has_value()) break;
      auto opened = self->codec_.Open(**frame);
      if (!opened.ok()) {
        if (opened.status().code() == Code::kUnauthenticated) {
          self->counters_.dropped_unauthenticated.Add();
        } else {
          self->counters_.dropped_malformed.Add();
        }
        self->Refuse(*outbox, *shared,
                     opened.status().code() == Code::kUnauthenticated
                         ? "authentication failed (wrong cluster key?)"
                         : "not a vsc envelope");
        refused = true;
        break;
      }
      if (!self->replay_.Accept(opened->sender, opened->counter).ok()) {
        self->counters_.dropped_replayed.Add();
        self->Refuse(*outbox, *shared, "a request repeated a counter (replay)");
        refused = true;
        break;
      }
      if (opened->message.has_read_request() && self->relay_ != nullptr) {
        self->counters_.requests.Add();
        asio::co_spawn(self->io_,
                       ReadRelay::Relay(self->relay_, std::move(**frame),
                                        opened->message.read_request(), outbox),
                       asio::detached);
        continue;
      }
      if (!opened->message.has_write_request()) {
        self->counters_.dropped_malformed.Add();
        close = true;
        break;
      }
      self->counters_.requests.Add();
      // The answer may come turns later; the weak outbox lets a closed session drop it.
      std::weak_ptr<Outbox> weak = outbox;
      self->replicator_.Submit(
          opened->message.write_request(), [self, weak](const proto::WriteResponse& resp) {
            auto out = weak.lock();
            if (!out || out->closed()) return;
            proto::Message m;
            *m.mutable_write_response() = resp;
            auto sealed = self->codec_.TrySeal("director", self->counter_.Next(), m);
            if (!sealed.ok()) return;
            std::vector<uint8_t> frame;
            proto::AppendFrame(frame, *sealed);
            out->Push(frame);
          });
    }
  }
  outbox->Close();
  asio::error_code ignore;
  shared->close(ignore);
  self->sessions_.erase(shared);
}

}  // namespace vsc::director

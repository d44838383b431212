#include "director/write_server.h"

#include <asio/experimental/as_tuple.hpp>

#include <spdlog/spdlog.h>

#include "director/outbox.h"
#include "proto/frame.h"

namespace vsc::director {

WriteServer::WriteServer(asio::io_context& io, const proto::ClusterKey& key, const Clock& clock,
                         Replicator& replicator)
    : io_(io), codec_(key), counter_(clock.WallMicros()), replicator_(replicator) {}

Status WriteServer::Start(const asio::ip::tcp::endpoint& endpoint) {
  asio::error_code ec;
  acceptor_ = std::make_unique<asio::ip::tcp::acceptor>(io_);
  acceptor_->open(endpoint.protocol(), ec);
  if (!ec) acceptor_->set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor_->bind(endpoint, ec);
  if (!ec) acceptor_->listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    return IoError("write port " + endpoint.address().to_string() + ":" +
                   std::to_string(endpoint.port()) + ": " + ec.message());
  }
  port_ = acceptor_->local_endpoint().port();
  asio::co_spawn(io_, Accept(this), asio::detached);
  return Status::Ok();
}

void WriteServer::Stop() {
  stopping_ = true;
  asio::error_code ec;
  if (acceptor_) acceptor_->close(ec);
  for (const auto& socket : sessions_) socket->close(ec);
}

asio::awaitable<void> WriteServer::Accept(WriteServer* self) {
  while (!self->stopping_) {
    auto [ec, socket] = co_await self->acceptor_->async_accept(
        asio::experimental::as_tuple(asio::use_awaitable));
    if (ec) {
      if (self->stopping_ || ec == asio::error::operation_aborted) co_return;
      continue;
    }
    asio::error_code ignore;
    socket.set_option(asio::ip::tcp::no_delay(true), ignore);
    asio::co_spawn(self->io_, Session(self, std::move(socket)), asio::detached);
  }
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
  while (!close) {
    auto [ec, n] = co_await shared->async_read_some(
        asio::buffer(buf), asio::experimental::as_tuple(asio::use_awaitable));
    if (ec) break;
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
        close = true;
        break;
      }
      if (!self->replay_.Accept(opened->sender, opened->counter).ok()) {
        self->counters_.dropped_replayed.Add();
        close = true;
        break;
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

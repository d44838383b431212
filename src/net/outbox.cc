#include "net/outbox.h"

#include <asio/experimental/as_tuple.hpp>

namespace vsc::net {

Outbox::Outbox(std::shared_ptr<asio::ip::tcp::socket> socket)
    : socket_(std::move(socket)), wake_(socket_->get_executor()) {
  wake_.expires_at(asio::steady_timer::time_point::max());
}

void Outbox::Push(std::span<const uint8_t> bytes) {
  if (closed_) return;
  pending_.insert(pending_.end(), bytes.begin(), bytes.end());
  wake_.cancel();
}

void Outbox::CloseWhenDrained() {
  close_when_drained_ = true;
  wake_.cancel();
}

void Outbox::Close() {
  closed_ = true;
  wake_.cancel();
}

asio::awaitable<void> Outbox::Run(std::shared_ptr<Outbox> self) {
  while (!self->closed_) {
    if (self->pending_.empty() && self->close_when_drained_) {
      asio::error_code ignore;
      self->socket_->shutdown(asio::ip::tcp::socket::shutdown_both, ignore);
      self->socket_->close(ignore);
      self->closed_ = true;
      break;
    }
    if (self->pending_.empty()) {
      // The timer never expires: Push and Close cancel it to wake this writer.
      self->wake_.expires_at(asio::steady_timer::time_point::max());
      co_await self->wake_.async_wait(asio::experimental::as_tuple(asio::use_awaitable));
      continue;
    }
    self->writing_.clear();
    self->writing_.swap(self->pending_);
    auto [ec, n] = co_await asio::async_write(*self->socket_, asio::buffer(self->writing_),
                                              asio::experimental::as_tuple(asio::use_awaitable));
    (void)n;
    if (ec) {
      self->closed_ = true;
      asio::error_code ignore;
      self->socket_->close(ignore);
    }
  }
  self->pending_.clear();
}

}  // namespace vsc::net

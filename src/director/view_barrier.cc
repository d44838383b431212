#include "director/view_barrier.h"

#include <asio/redirect_error.hpp>
#include <asio/steady_timer.hpp>
#include <asio/this_coro.hpp>
#include <asio/use_awaitable.hpp>
#include <memory>

namespace vsc::director {

asio::awaitable<bool> AwaitViewBarrier(const ViewBarrier& barrier, Duration timeout) {
  auto executor = co_await asio::this_coro::executor;
  // Shared with the continuation, which may run after this coroutine is gone (Stop).
  auto timer = std::make_shared<asio::steady_timer>(executor, timeout);
  auto held = std::make_shared<bool>(false);
  barrier([timer, held] {
    *held = true;
    timer->cancel();
  });
  if (!*held) {
    asio::error_code ec;
    co_await timer->async_wait(asio::redirect_error(asio::use_awaitable, ec));
  }
  co_return *held;
}

}  // namespace vsc::director

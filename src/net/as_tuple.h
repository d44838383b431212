// The completion token every coroutine in the I/O shell uses: an awaitable that yields
// (error_code, result...) as a tuple instead of throwing, so a failed read or write is a value
// the caller branches on.
#pragma once

#include <asio/experimental/as_tuple.hpp>
#include <asio/use_awaitable.hpp>

namespace vsc::net {

inline constexpr auto kTuple = asio::experimental::as_tuple(asio::use_awaitable);

}  // namespace vsc::net

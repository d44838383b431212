// A TCP listener and a UDP socket on the same port number, as a service offered over both
// transports needs. With port 0 the kernel picks the number: the TCP listener is bound first
// (a TIME_WAIT socket holding a number can make a later TCP listen fail, never a UDP bind), then
// the UDP socket takes the same number; if that fails another number is tried (up to 16 times),
// the clashing listeners held meanwhile so that no number is tried twice, and all of them
// released before returning. With a fixed port there is one attempt. Neither socket is started.
// IPv4 or IPv6, as `address` is.
#pragma once

#include <asio.hpp>
#include <memory>

#include "common/status.h"
#include "net/tcp_listener.h"
#include "net/udp_batch.h"

namespace vsc::net {

struct TcpUdpPair {
  std::unique_ptr<TcpListener> tcp;
  std::unique_ptr<UdpBatchSocket> udp;
  uint16_t port = 0;
};

// Both sockets get SO_REUSEPORT when `udp_options.reuse_port` is set.
Result<TcpUdpPair> BindTcpUdpPair(asio::io_context& io, const asio::ip::address& address,
                                  uint16_t port, const UdpBatchOptions& udp_options);

}  // namespace vsc::net

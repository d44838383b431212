// TcpRequest: one request over TCP to 127.0.0.1:port from the source address `source` (host
// order; any 127.0.0.0/8 address is this host's): connect, send `what`, read to EOF. "" when
// the connection is refused. Tests of persistence tell clients apart by their source address.
#pragma once

#include <asio.hpp>
#include <cstdint>
#include <string>

namespace vsc::test_support {

inline std::string TcpRequest(uint16_t port, const std::string& what = "ping",
                              uint32_t source = 0x7f000001) {
  asio::io_context io;
  asio::ip::tcp::socket s(io);
  asio::error_code ec;
  s.open(asio::ip::tcp::v4(), ec);
  if (source != 0x7f000001) s.bind({asio::ip::make_address_v4(source), 0}, ec);
  s.connect({asio::ip::address_v4::loopback(), port}, ec);
  if (ec) return "";
  asio::write(s, asio::buffer(what), ec);
  std::string out;
  char buf[512];
  for (;;) {
    const size_t n = s.read_some(asio::buffer(buf), ec);
    out.append(buf, n);
    if (ec) break;
  }
  return out;
}

}  // namespace vsc::test_support

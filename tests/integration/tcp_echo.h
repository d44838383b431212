// A TCP echo server on its own thread, and one client's outcome through a virtual service in
// front of it: for the tests that send TCP through a director (services_cli_test.cc,
// director_standby_test.cc). Header-only; test thread.
#pragma once

#include <poll.h>
#include <sys/socket.h>

#include <asio.hpp>
#include <chrono>
#include <memory>
#include <string>
#include <thread>

namespace vsc::integration {

// A TCP echo server on its own thread (a real server behind the service).
class EchoServer {
 public:
  EchoServer() : acceptor_(io_, {asio::ip::address_v4::loopback(), 0}) {
    Accept();
    thread_ = std::thread([this] { io_.run(); });
  }
  ~EchoServer() {
    io_.stop();
    thread_.join();
  }
  uint16_t port() const { return port_; }

 private:
  void Accept() {
    acceptor_.async_accept([this](const asio::error_code& ec, asio::ip::tcp::socket s) {
      if (ec) return;
      Echo(std::make_shared<asio::ip::tcp::socket>(std::move(s)), std::make_shared<char>());
      Accept();
    });
  }
  static void Echo(std::shared_ptr<asio::ip::tcp::socket> s, std::shared_ptr<char> c) {
    s->async_read_some(asio::buffer(c.get(), 1), [s, c](const asio::error_code& ec, size_t) {
      if (ec) return;
      asio::async_write(*s, asio::buffer(c.get(), 1), [s, c](const asio::error_code& wec, size_t) {
        if (!wec) Echo(s, c);
      });
    });
  }
  asio::io_context io_;
  asio::ip::tcp::acceptor acceptor_;
  uint16_t port_ = acceptor_.local_endpoint().port();
  std::thread thread_;
};

// One client through the service: "served" when its byte comes back, "refused" when the
// director closes or resets it, "hung" when neither happens within `limit`.
inline std::string Outcome(asio::ip::tcp::socket& c, std::chrono::milliseconds limit) {
  asio::error_code ec;
  asio::write(c, asio::buffer("x", 1), ec);
  if (ec) return "refused";
  pollfd p{c.native_handle(), POLLIN, 0};
  if (::poll(&p, 1, static_cast<int>(limit.count())) <= 0) return "hung";
  char b;
  return ::recv(c.native_handle(), &b, 1, MSG_DONTWAIT) == 1 ? "served" : "refused";
}

}  // namespace vsc::integration

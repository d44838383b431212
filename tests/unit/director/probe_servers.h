// Loopback servers for the health-check tests, on the test's io_context: an HTTP responder, a
// listener that resets every connection, one that accepts and stays silent, a UDP echo, and a
// black hole (a listener whose accept queue is full, so the kernel drops new SYNs).
#pragma once

#include <asio.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace vsc::director::testing {

using asio::ip::tcp;
using asio::ip::udp;

// Runs `io` until `done()` or `limit` passes; returns done().
inline bool RunUntil(asio::io_context& io, const std::function<bool()>& done,
                     std::chrono::milliseconds limit = std::chrono::seconds(10)) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!done() && std::chrono::steady_clock::now() < deadline) {
    io.run_for(std::chrono::milliseconds(5));
    if (io.stopped()) io.restart();
  }
  return done();
}

class TcpTestServer {
 public:
  enum class Mode { kRespond, kReset, kSilent };

  // `port` 0: the kernel picks one; another: that one (reused, to restart a server in place).
  TcpTestServer(asio::io_context& io, Mode mode, std::string response = "", uint16_t port = 0)
      : acceptor_(io, tcp::endpoint(asio::ip::address_v4::loopback(), port)),
        mode_(mode),
        response_(std::make_shared<std::string>(std::move(response))) {
    Accept();
  }

  tcp::endpoint endpoint() const { return acceptor_.local_endpoint(); }
  int accepted() const { return accepted_; }
  // kRespond: the answer is written this long after the request arrives (a loaded server).
  void SetDelay(std::chrono::milliseconds delay) { delay_ = delay; }
  // Stops listening. A connection the kernel completed but this server had not accepted yet is
  // accepted first, as a real server's would be: closing a listener resets its queue, which
  // would end a client's flow the test meant to keep open.
  void Close() {
    asio::error_code ec;
    acceptor_.non_blocking(true, ec);
    for (;;) {
      tcp::socket s(acceptor_.get_executor());
      acceptor_.accept(s, ec);
      if (ec) break;
      ++accepted_;
      Serve(std::make_shared<tcp::socket>(std::move(s)));
    }
    acceptor_.close();
  }

 private:
  void Accept() {
    acceptor_.async_accept([this](const asio::error_code& ec, tcp::socket s) {
      if (ec) return;
      ++accepted_;
      Serve(std::make_shared<tcp::socket>(std::move(s)));
      Accept();
    });
  }

  void Serve(std::shared_ptr<tcp::socket> s) {
    if (mode_ == Mode::kReset) {
      s->set_option(asio::socket_base::linger(true, 0));
      s->close();  // linger 0: RST
      return;
    }
    if (mode_ == Mode::kSilent) {
      held_.push_back(s);
      return;
    }
    auto buf = std::make_shared<std::array<char, 4096>>();
    s->async_read_some(asio::buffer(*buf), [this, s, buf](const asio::error_code& ec, size_t) {
      if (ec) return;
      auto timer = std::make_shared<asio::steady_timer>(s->get_executor(), delay_);
      timer->async_wait([s, timer, r = response_](const asio::error_code&) {
        asio::async_write(*s, asio::buffer(*r), [s, r](const asio::error_code&, size_t) {
          asio::error_code ignored;
          s->shutdown(tcp::socket::shutdown_send, ignored);
        });
      });
    });
  }

  tcp::acceptor acceptor_;
  Mode mode_;
  std::shared_ptr<std::string> response_;
  std::vector<std::shared_ptr<tcp::socket>> held_;
  int accepted_ = 0;
  std::chrono::milliseconds delay_{0};
};

// A listener with backlog 0 whose one queue slot is taken and never accepted: the kernel drops
// every further SYN, as a black-holing backend would.
class BlackHole {
 public:
  explicit BlackHole(asio::io_context& io)
      : acceptor_(io, tcp::endpoint(asio::ip::address_v4::loopback(), 0), true), filler_(io) {
    acceptor_.listen(0);
    filler_.connect(acceptor_.local_endpoint());  // completes at once: the queue has one slot
  }
  tcp::endpoint endpoint() const { return acceptor_.local_endpoint(); }

 private:
  tcp::acceptor acceptor_;
  tcp::socket filler_;
};

class UdpEcho {
 public:
  explicit UdpEcho(asio::io_context& io)
      : socket_(io, udp::endpoint(asio::ip::address_v4::loopback(), 0)) {
    Receive();
  }
  udp::endpoint endpoint() const { return socket_.local_endpoint(); }

 private:
  void Receive() {
    socket_.async_receive_from(asio::buffer(buf_), from_,
                               [this](const asio::error_code& ec, size_t n) {
                                 if (ec) return;
                                 asio::error_code ignored;
                                 socket_.send_to(asio::buffer(buf_.data(), n), from_, 0, ignored);
                                 Receive();
                               });
  }
  udp::socket socket_;
  udp::endpoint from_;
  std::array<char, 2048> buf_;
};

// A loopback port with nothing bound to it (bound, read back, closed).
inline uint16_t ClosedTcpPort(asio::io_context& io) {
  tcp::acceptor a(io, tcp::endpoint(asio::ip::address_v4::loopback(), 0));
  return a.local_endpoint().port();
}
inline uint16_t ClosedUdpPort(asio::io_context& io) {
  udp::socket s(io, udp::endpoint(asio::ip::address_v4::loopback(), 0));
  return s.local_endpoint().port();
}

inline std::string HttpResponse(int status, const std::string& body) {
  return "HTTP/1.0 " + std::to_string(status) +
         " X\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

}  // namespace vsc::director::testing

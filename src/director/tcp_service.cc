#include "director/tcp_service.h"

#include <asio/experimental/as_tuple.hpp>

#include <arpa/inet.h>

#include <chrono>

#include "net/tcp_proxy.h"

namespace vsc::director {
namespace {

asio::ip::tcp::endpoint ToEndpoint(const sockaddr_in& sa) {
  return {asio::ip::address_v4(ntohl(sa.sin_addr.s_addr)), ntohs(sa.sin_port)};
}

}  // namespace

void TcpService::Start(std::unique_ptr<net::TcpListener> listener) {
  listener_ = std::move(listener);
  listener_->Start([this](asio::ip::tcp::socket socket) {
    asio::co_spawn(io_, Session(this, std::move(socket)), asio::detached);
  });
}

void TcpService::Stop() {
  if (listener_) listener_->Stop();
}

uint16_t TcpService::local_port() const { return listener_ ? listener_->local_port() : 0; }

asio::awaitable<void> TcpService::Session(TcpService* self, asio::ip::tcp::socket client) {
  WorkerCounters& counters = self->counters_;
  counters.tcp_accepted.Add();
  asio::error_code ec;
  auto remote = client.remote_endpoint(ec);
  if (ec) co_return;
  sched::Flow flow{remote.address().to_v4().to_uint(), remote.port()};
  std::optional<size_t> pick =
      self->sched_.view() ? self->sched_.Pick(flow, self->clock_.Now()) : std::nullopt;
  if (!pick) {
    counters.tcp_no_server.Add();
    co_return;  // closing the socket tells the client there is no server
  }
  // Copy what the session needs: the view may be replaced while it runs.
  const ViewServer server = self->sched_.servers()[*pick];
  self->sched_.Acquire(*pick);
  ServerCounters& sc = counters.servers[kTcpService][server.slot];
  ServiceCounters& svc = counters.services[kTcpService];
  sc.conns.Add();
  sc.active.Add();
  svc.conns.Add();

  auto upstream = co_await net::Connect(client.get_executor(), ToEndpoint(server.address),
                                        std::chrono::seconds(2));
  if (!upstream.ok()) {
    counters.tcp_connect_failed.Add();
  } else {
    net::ProxyResult r = co_await net::Proxy(std::move(client), std::move(upstream).value(),
                                             net::ProxyOptions{});
    sc.in_bytes.Add(r.bytes_a_to_b);
    sc.out_bytes.Add(r.bytes_b_to_a);
    svc.in_bytes.Add(r.bytes_a_to_b);
    svc.out_bytes.Add(r.bytes_b_to_a);
  }
  sc.active.Sub();
  self->sched_.ReleaseSlot(server.slot);
}

}  // namespace vsc::director

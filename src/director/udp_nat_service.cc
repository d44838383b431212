#include "director/udp_nat_service.h"

#include <spdlog/spdlog.h>
#include <sys/socket.h>

#include <asio/experimental/as_tuple.hpp>

#include "director/flow_expiry.h"
#include "director/tcp_nat_service.h"
#include "net/endpoint.h"

namespace vsc::director {
namespace {

constexpr auto kTuple = asio::experimental::as_tuple(asio::use_awaitable);

vservice::AddrPort ToAddrPort(const asio::ip::udp::endpoint& ep) {
  return {FromAsio(ep.address()), ep.port()};
}

}  // namespace

struct UdpNatService::Session {
  Session(asio::io_context& io, asio::ip::udp::endpoint from, vservice::AddrPort c)
      : upstream(io), timer(io), client_ep(from), client(c) {}
  asio::ip::udp::socket upstream;  // connected to the destination
  asio::steady_timer timer;        // one-packet sessions: the reply window
  asio::ip::udp::endpoint client_ep;
  vservice::AddrPort client;
  vservice::AddrPort dest_addr;
  std::shared_ptr<DestStats> dest;
  std::shared_ptr<ServiceStats> service;
  bool one_packet = false;
  bool closed = false;
};

Result<asio::ip::udp::socket> BindUdp(asio::io_context& io, const asio::ip::udp::endpoint& ep) {
  asio::ip::udp::socket s(io);
  const std::string what = "bind udp " + net::ToString(ep);
  asio::error_code ec;
  s.open(ep.protocol(), ec);
  if (ec) return ErrnoStatus(what, ec.value());
  int one = 1;
  if (::setsockopt(s.native_handle(), SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) != 0) {
    return ErrnoStatus(what + " (SO_REUSEPORT)", errno);
  }
  s.bind(ep, ec);
  if (ec) return ErrnoStatus(what, ec.value());
  return s;
}

UdpNatService::UdpNatService(asio::io_context& io, const Clock& clock,
                             sched::SchedulerOptions sched, UdpNatOptions options,
                             asio::ip::udp::socket socket)
    : io_(io),
      clock_(clock),
      picker_(sched),
      options_(options),
      socket_(std::move(socket)),
      table_(vservice::UdpSessionTable::Create(
                 {options.session_timeout, options.max_sessions, /*one_packet=*/false})
                 .value()) {}

void UdpNatService::Start() {
  asio::co_spawn(io_, ReceiveLoop(shared_from_this()), asio::detached);
  ArmExpiry();
}

void UdpNatService::Stop() {
  stopped_ = true;
  asio::error_code ignored;
  socket_.close(ignored);
  expiry_.cancel();
  auto sessions = std::move(sessions_);
  for (auto& [client, s] : sessions) CloseSession(s);
}

void UdpNatService::OnView(ServiceViewPtr view) {
  const ServiceViewPtr previous = picker_.view();
  picker_.OnView(view);
  for (const FlowsToEndEntry& e : FlowsToEnd(previous.get(), *view, options_.expire_nodest_conn)) {
    const size_t n = EndSessions(e.dest);
    if (n == 0) continue;
    Bump(view->stats->flows_ended, n);
    spdlog::info("nat {}: closed {} session(s) to {}: {}", vservice::ToString(view->key), n,
                 vservice::ToString(e.dest), EndReasonText(e));
  }
}

void UdpNatService::ListFlows(TimePoint now, std::vector<FlowEntry>& out) const {
  const ServiceViewPtr& view = picker_.view();
  if (!view) return;
  const vservice::AddrPort vip = view->key.vip_port();
  const Duration timeout = table_.options().timeout;
  table_.ForEach([&](const vservice::UdpSession& s) {
    const Duration left = s.last_seen + timeout - now;
    if (left <= Duration::zero()) return;  // expired, not yet swept
    out.push_back({vservice::Proto::kUdp, "UDP", s.client, vip, s.dest, left});
  });
  for (const DestPicker::Template& t : picker_.Templates(now)) {
    out.push_back({vservice::Proto::kUdp, "NONE", t.network, vip, t.dest, t.expires_in});
  }
}

size_t UdpNatService::EndSessions(const vservice::AddrPort& dest) {
  size_t n = 0;
  for (auto it = sessions_.begin(); it != sessions_.end();) {
    if (it->second->dest_addr != dest) {
      ++it;
      continue;
    }
    CloseSession(it->second);
    table_.Close(it->first);
    it = sessions_.erase(it);
    ++n;
  }
  return n;
}

void UdpNatService::ArmExpiry() {
  expiry_.expires_after(std::chrono::seconds(1));
  std::weak_ptr<UdpNatService> weak = weak_from_this();
  expiry_.async_wait([weak](const asio::error_code& ec) {
    auto self = weak.lock();
    if (ec || !self || self->stopped_) return;
    if (const auto& t = self->options_.timeouts; t && t->udp() != self->table_.options().timeout) {
      (void)self->table_.SetTimeout(t->udp());  // FlowTimeouts holds only values above zero
    }
    for (const vservice::UdpSession& gone : self->table_.Expire(self->clock_.Now())) {
      auto it = self->sessions_.find(gone.client);
      if (it == self->sessions_.end()) continue;
      self->CloseSession(it->second);
      self->sessions_.erase(it);
    }
    self->ArmExpiry();
  });
}

asio::awaitable<void> UdpNatService::ReceiveLoop(std::shared_ptr<UdpNatService> self) {
  asio::ip::udp::endpoint from;
  while (!self->stopped_) {
    auto [ec, n] =
        co_await self->socket_.async_receive_from(asio::buffer(self->buffer_), from, kTuple);
    if (self->stopped_) break;
    if (ec) continue;  // ICMP errors reported on the socket; the next datagram comes anyway
    self->OnDatagram(from, std::span<const uint8_t>(self->buffer_.data(), n));
  }
}

void UdpNatService::OnDatagram(const asio::ip::udp::endpoint& from, std::span<const uint8_t> data) {
  const ServiceViewPtr& view = picker_.view();
  if (!view) return;
  const vservice::AddrPort client = ToAddrPort(from);
  const TimePoint now = clock_.Now();
  std::shared_ptr<Session> s;
  if (!view->config.one_packet && table_.Lookup(client, now) != nullptr) {
    s = sessions_.at(client);
  } else {
    s = OpenSession(from, client, view->config.one_packet);
    if (!s) return;
  }
  Bump(s->dest->packets_in);
  Bump(s->dest->bytes_in, data.size());
  Bump(s->service->packets_in);
  Bump(s->service->bytes_in, data.size());
  asio::error_code ec;
  s->upstream.send(asio::buffer(data.data(), data.size()), 0, ec);  // non-blocking: UDP
}

std::shared_ptr<UdpNatService::Session> UdpNatService::OpenSession(
    const asio::ip::udp::endpoint& from, const vservice::AddrPort& client, bool one_packet) {
  const ServiceViewPtr view = picker_.view();
  std::optional<size_t> pick = picker_.Pick(client, clock_.Now());
  std::optional<vservice::AddrPort> dest;
  std::shared_ptr<DestStats> stats;
  if (pick) {
    dest = view->dests[*pick].dest;
    stats = view->dests[*pick].stats;
  } else if (view->config.sorry_server) {
    dest = view->config.sorry_server;
    stats = view->sorry_stats;
    Bump(view->stats->to_sorry);
  } else {
    Bump(view->stats->no_dest);
    return nullptr;
  }
  if (!one_packet && !table_.Open(client, *dest, clock_.Now()).ok()) {
    Bump(view->stats->no_dest);  // the session table is full of live sessions
    return nullptr;
  }
  auto s = std::make_shared<Session>(io_, from, client);
  s->dest_addr = *dest;
  s->dest = stats;
  s->service = view->stats;
  s->one_packet = one_packet;
  asio::error_code ec;
  s->upstream.connect({ToAsio(dest->addr), dest->port}, ec);
  if (ec) {
    table_.Close(client);
    Bump(view->stats->no_dest);
    return nullptr;
  }
  Bump(stats->conns);
  Bump(stats->active);
  Bump(view->stats->conns);
  if (one_packet) {
    s->timer.expires_after(options_.ops_reply_window);
    s->timer.async_wait([self = shared_from_this(), s](const asio::error_code& e) {
      if (!e) self->CloseSession(s);
    });
  } else {
    sessions_[client] = s;
  }
  asio::co_spawn(io_, RelayReplies(shared_from_this(), s), asio::detached);
  return s;
}

void UdpNatService::CloseSession(const std::shared_ptr<Session>& s) {
  if (s->closed) return;
  s->closed = true;
  asio::error_code ignored;
  s->upstream.close(ignored);
  s->timer.cancel();
  Drop(s->dest->active);
}

asio::awaitable<void> UdpNatService::RelayReplies(std::shared_ptr<UdpNatService> self,
                                                  std::shared_ptr<Session> s) {
  std::vector<uint8_t> buf(65536);
  while (!s->closed) {
    auto [ec, n] = co_await s->upstream.async_receive(asio::buffer(buf), kTuple);
    if (s->closed || self->stopped_) break;
    if (ec) {
      if (ec == asio::error::connection_refused) continue;  // ICMP port unreachable
      break;
    }
    if (!s->one_packet) self->table_.Refresh(s->client, self->clock_.Now());
    Bump(s->dest->packets_out);
    Bump(s->dest->bytes_out, n);
    Bump(s->service->packets_out);
    Bump(s->service->bytes_out, n);
    asio::error_code ignored;
    self->socket_.send_to(asio::buffer(buf.data(), n), s->client_ep, 0, ignored);
  }
}

}  // namespace vsc::director

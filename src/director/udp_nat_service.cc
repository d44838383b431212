#include "director/udp_nat_service.h"

#include <spdlog/spdlog.h>
#include <sys/socket.h>

#include <cerrno>

#include "director/flow_expiry.h"
#include "director/sync_outbox.h"
#include "director/tcp_nat_service.h"
#include "net/endpoint.h"

namespace vsc::director {
namespace {

vservice::AddrPort ToAddrPort(const asio::ip::udp::endpoint& ep) {
  return {FromAsio(ep.address()), ep.port()};
}

}  // namespace

struct UdpNatService::Session {
  Session(asio::io_context& io, const net::SockAddr& from, vservice::AddrPort c)
      : upstream(io), timer(io), client_ep(from), client(c) {}
  asio::ip::udp::socket upstream;  // connected to the destination, non-blocking
  asio::steady_timer timer;        // one-packet sessions: the reply window
  net::SockAddr client_ep;
  vservice::AddrPort client;
  vservice::AddrPort dest_addr;
  std::shared_ptr<DestStats> dest;
  std::shared_ptr<ServiceStats> service;
  bool one_packet = false;
  bool closed = false;
  bool synced = false;  // passed on to the peer directors (state sync) when it opened
  TimePoint noted{};    // when last passed on
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
                             DestFailureFn on_failure, asio::ip::udp::socket socket)
    : io_(io),
      clock_(clock),
      picker_(sched),
      options_(options),
      on_failure_(std::move(on_failure)),
      socket_(std::move(socket)),
      table_(vservice::UdpSessionTable::Create(
                 {options.session_timeout, options.max_sessions, /*one_packet=*/false})
                 .value()) {}

void UdpNatService::Start() {
  asio::error_code ignored;
  socket_.native_non_blocking(true, ignored);
  // Datagrams may be queued already: the first step is a receive, not a wait.
  asio::post(io_, [self = shared_from_this()] {
    if (!self->stopped_) self->DrainClients();
  });
  ArmExpiry();
}

void UdpNatService::Stop() {
  stopped_ = true;
  asio::error_code ignored;
  socket_.close(ignored);
  expiry_.cancel();
  auto sessions = std::move(sessions_);
  for (auto& [client, s] : sessions) CloseSession(*s);
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
}

size_t UdpNatService::EndSessions(const vservice::AddrPort& dest) {
  size_t n = 0;
  for (auto it = sessions_.begin(); it != sessions_.end();) {
    if (it->second->dest_addr != dest) {
      ++it;
      continue;
    }
    CloseSession(*it->second);
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
      self->CloseSession(*it->second);
      self->sessions_.erase(it);
    }
    self->ArmExpiry();
  });
}

void UdpNatService::ArmClientRead() {
  socket_.async_wait(asio::socket_base::wait_read,
                     [self = shared_from_this()](const asio::error_code& ec) {
                       if (ec || self->stopped_) return;
                       self->DrainClients();
                     });
}

void UdpNatService::DrainClients() {
  const int fd = socket_.native_handle();
  for (int round = 0; round < kBatchesPerWakeup; ++round) {
    const int n = rx_.Receive(fd);
    if (n == -EINTR) continue;
    if (n == -EAGAIN || n == -EWOULDBLOCK) break;
    if (n < 0) continue;  // an error queued on the socket; the next datagram comes anyway
    HandleClientBatch(static_cast<size_t>(n));
    if (static_cast<size_t>(n) < rx_.capacity()) break;  // the queue was empty
    if (round + 1 == kBatchesPerWakeup) {
      // More may be queued: let the worker's other handlers run first.
      asio::post(io_, [self = shared_from_this()] {
        if (!self->stopped_) self->DrainClients();
      });
      return;
    }
  }
  ArmClientRead();
}

void UdpNatService::HandleClientBatch(size_t n) {
  ++io_stats_.client_receives;
  io_stats_.client_datagrams += n;
  const ServiceViewPtr& view = picker_.view();
  if (!view) return;
  const TimePoint now = clock_.Now();
  groups_.Clear();
  for (size_t i = 0; i < n; ++i) {
    if (rx_.truncated(i)) continue;  // slots hold the largest UDP payload: never
    if (Session* s = SessionFor(*view, rx_.peer(i), now)) groups_.Add(s, static_cast<uint32_t>(i));
  }
  groups_.ForEach([&](Session* s, std::span<const uint32_t> indices) {
    // Sessions noted when they opened (not one-packet, not to the sorry server) are noted
    // again every half timeout while in use, so a peer's hint outlives no live session.
    if (s->synced && now - s->noted >= table_.options().timeout / 2) {
      NoteSession(*view, *s, now);
    }
    uint64_t bytes = 0;
    for (uint32_t i : indices) {
      tx_.Add(rx_.data(i), nullptr);  // the upstream socket is connected
      bytes += rx_.data(i).size();
    }
    Bump(s->dest->packets_in, indices.size());
    Bump(s->dest->bytes_in, bytes);
    Bump(s->service->packets_in, indices.size());
    Bump(s->service->bytes_in, bytes);
    const net::MmsgSender::Outcome sent = tx_.Send(s->upstream.native_handle());
    CountSend(sent, io_stats_.upstream_sends);
    if (sent.unreachable > 0) OnUnreachable(*s);
  });
}

UdpNatService::Session* UdpNatService::SessionFor(const ServiceView& view,
                                                  const net::SockAddr& peer, TimePoint now) {
  const vservice::AddrPort client = ToAddrPort(net::ToUdpEndpoint(peer));
  if (!view.config.one_packet) {
    if (table_.Lookup(client, now) != nullptr) return sessions_.at(client).get();
    // Expired at `now` but not swept yet (Lookup just forgot it): close it before its client
    // gets a new one, so its socket and its active count go with it.
    if (auto it = sessions_.find(client); it != sessions_.end()) {
      CloseSession(*it->second);
      sessions_.erase(it);
    }
  }
  return OpenSession(peer, client, view.config.one_packet).get();
}

void UdpNatService::CountSend(const net::MmsgSender::Outcome& o, uint64_t& calls) {
  ++calls;
  io_stats_.dropped += o.refused + o.dropped;
}

std::shared_ptr<UdpNatService::Session> UdpNatService::OpenSession(const net::SockAddr& peer,
                                                                   const vservice::AddrPort& client,
                                                                   bool one_packet) {
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
  auto s = std::make_shared<Session>(io_, peer, client);
  s->dest_addr = *dest;
  s->dest = stats;
  s->service = view->stats;
  s->one_packet = one_packet;
  asio::error_code ec;
  s->upstream.connect({ToAsio(dest->addr), dest->port}, ec);
  if (!ec) s->upstream.native_non_blocking(true, ec);
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
      if (!e) self->CloseSession(*s);
    });
  } else {
    sessions_[client] = s;
    if (view->sync && pick) NoteSession(*view, *s, clock_.Now());
  }
  ArmReplies(s);
  return s;
}

void UdpNatService::NoteSession(const ServiceView& view, Session& s, TimePoint now) {
  s.synced = true;
  s.noted = now;
  SyncRecord r;
  r.kind = SyncKind::kUdpSession;
  r.service = view.key;
  r.client = s.client;
  r.dest = s.dest_addr;
  r.expires_in = std::chrono::duration_cast<std::chrono::milliseconds>(table_.options().timeout);
  view.sync->Note(r);
}

void UdpNatService::CloseSession(Session& s) {
  if (s.closed) return;
  s.closed = true;
  asio::error_code ignored;
  s.upstream.close(ignored);
  s.timer.cancel();
  Drop(s.dest->active);
}

void UdpNatService::OnUnreachable(Session& s) {
  if (s.closed) return;
  Bump(s.dest->unreachable);
  if (const ServiceViewPtr& view = picker_.view()) {
    spdlog::warn(
        "nat {}: {} answered port unreachable; the session of {} ends, its next "
        "datagram is scheduled again",
        vservice::ToString(view->key), vservice::ToString(s.dest_addr),
        vservice::ToString(s.client));
    if (on_failure_) on_failure_(view->key, s.dest_addr, "port unreachable");
  }
  CloseSession(s);
  if (s.one_packet) return;  // its handlers hold it until they see it closed
  if (auto it = sessions_.find(s.client); it != sessions_.end() && it->second.get() == &s) {
    table_.Close(s.client);
    sessions_.erase(it);  // last: `s` may go with it
  }
}

void UdpNatService::ArmReplies(const std::shared_ptr<Session>& s) {
  s->upstream.async_wait(asio::socket_base::wait_read,
                         [self = shared_from_this(), s](const asio::error_code& ec) {
                           if (ec || s->closed || self->stopped_) return;
                           self->DrainReplies(s);
                         });
}

void UdpNatService::DrainReplies(const std::shared_ptr<Session>& s) {
  const int fd = s->upstream.native_handle();
  for (int round = 0; round < kBatchesPerWakeup; ++round) {
    const int n = rx_.Receive(fd);
    if (n == -EINTR) continue;
    if (n == -ECONNREFUSED) {  // an ICMP port unreachable for an earlier datagram
      OnUnreachable(*s);
      return;
    }
    if (n == -EAGAIN || n == -EWOULDBLOCK) break;
    if (n < 0) return;  // the socket failed: this session relays no more replies
    RelayBatch(*s, static_cast<size_t>(n));
    if (static_cast<size_t>(n) < rx_.capacity()) break;
    if (round + 1 == kBatchesPerWakeup) {
      asio::post(io_, [self = shared_from_this(), s] {
        if (!s->closed && !self->stopped_) self->DrainReplies(s);
      });
      return;
    }
  }
  ArmReplies(s);
}

void UdpNatService::RelayBatch(Session& s, size_t n) {
  ++io_stats_.reply_receives;
  if (!s.one_packet) table_.Refresh(s.client, clock_.Now());
  uint64_t bytes = 0;
  for (size_t i = 0; i < n; ++i) {
    if (rx_.truncated(i)) continue;
    tx_.Add(rx_.data(i), &s.client_ep);
    bytes += rx_.data(i).size();
  }
  Bump(s.dest->packets_out, tx_.size());
  Bump(s.dest->bytes_out, bytes);
  Bump(s.service->packets_out, tx_.size());
  Bump(s.service->bytes_out, bytes);
  CountSend(tx_.Send(socket_.native_handle()), io_stats_.reply_sends);
}

}  // namespace vsc::director

#include "director/tcp_nat_service.h"

#include <spdlog/spdlog.h>

#include "director/flow_expiry.h"

namespace vsc::director {

asio::ip::address ToAsio(const vservice::IpAddress& ip) {
  const auto& b = ip.bytes();
  if (ip.is_v4()) {
    return asio::ip::address_v4(asio::ip::address_v4::bytes_type{b[0], b[1], b[2], b[3]});
  }
  asio::ip::address_v6::bytes_type v6;
  std::copy(b.begin(), b.end(), v6.begin());
  return asio::ip::address_v6(v6);
}

vservice::IpAddress FromAsio(const asio::ip::address& a) {
  if (a.is_v4()) return vservice::IpAddress::V4(a.to_v4().to_uint());
  const auto bytes = a.to_v6().to_bytes();
  std::array<uint8_t, 16> out;
  std::copy(bytes.begin(), bytes.end(), out.begin());
  return vservice::IpAddress::V6(out);
}

namespace {

asio::ip::tcp::endpoint Endpoint(const vservice::AddrPort& ap) {
  return {ToAsio(ap.addr), ap.port};
}

}  // namespace

void TcpNatService::OnView(ServiceViewPtr view) {
  const ServiceViewPtr previous = picker_.view();
  picker_.OnView(view);
  for (const FlowsToEndEntry& e : FlowsToEnd(previous.get(), *view, options_.expire_nodest_conn)) {
    const size_t n = EndFlows(e);
    if (n == 0) continue;
    Bump(view->stats->flows_ended, n);
    spdlog::info("nat {}: closed {} connection(s) to {}: {}", vservice::ToString(view->key), n,
                 vservice::ToString(e.dest), EndReasonText(e));
  }
}

size_t TcpNatService::EndFlows(const FlowsToEndEntry& e) {
  // Close() resets the sockets now; each session unregisters itself when its proxy returns.
  std::vector<std::shared_ptr<net::ProxyHandle>> closers;
  auto [first, last] = open_.equal_range(e.dest);
  for (auto it = first; it != last; ++it) {
    if (it->second.sorry == e.sorry) closers.push_back(it->second.handle);
  }
  for (const auto& c : closers) c->Close(EndReasonText(e));
  return closers.size();
}

void TcpNatService::ListFlows(TimePoint /*now*/, std::vector<FlowEntry>& out) const {
  const ServiceViewPtr& view = picker_.view();
  if (!view) return;
  const vservice::AddrPort vip = view->key.vip_port();
  for (const auto& [dest, flow] : open_) {
    const std::optional<net::ProxyFlowState> st = flow.handle->Inspect();
    if (!st) continue;  // connecting, or ending
    out.push_back({vservice::Proto::kTcp, st->half_closed ? "FIN_WAIT" : "ESTABLISHED", flow.client,
                   vip, dest, std::max(st->limit - st->idle, Duration::zero())});
  }
}

void TcpNatService::Start() {
  std::weak_ptr<TcpNatService> weak = weak_from_this();
  listener_->Start(
      [this, weak](asio::ip::tcp::socket socket) {
        auto self = weak.lock();
        if (!self) return;
        asio::co_spawn(io_, Session(std::move(self), std::move(socket)), asio::detached);
      },
      [this] {
        if (const ServiceViewPtr& view = picker_.view()) Bump(view->stats->no_descriptor);
      });
}

void TcpNatService::Stop() {
  if (listener_) listener_->Stop();
}

asio::awaitable<TcpNatService::Dispatched> TcpNatService::Dispatch(
    std::shared_ptr<TcpNatService> self, ServiceViewPtr view, vservice::AddrPort client) {
  auto tried = std::make_unique<bool[]>(view->dests.size());
  for (size_t attempt = 0; attempt < view->dests.size(); ++attempt) {
    std::optional<size_t> pick = self->picker_.Pick(
        client, self->clock_.Now(), std::span<const bool>(tried.get(), view->dests.size()));
    if (!pick) break;
    const DestView& d = view->dests[*pick];
    if (attempt > 0) Bump(view->stats->redispatched);
    Bump(d.stats->inactive);
    auto up = co_await net::Connect(self->io_.get_executor(), Endpoint(d.dest),
                                    self->options_.connect_timeout);
    Drop(d.stats->inactive);
    if (up.ok()) co_return Dispatched{std::move(up).value(), *pick, false};
    if (up.status().code() == Code::kResourceExhausted) {
      // No local socket: not this destination's fault, and no other would fare better.
      co_return Dispatched{std::nullopt, 0, true};
    }
    tried[*pick] = true;
    Bump(d.stats->connect_failures);
    spdlog::warn("nat {}: {}; trying another destination", vservice::ToString(view->key),
                 up.status().message());
    if (self->on_failure_) self->on_failure_(view->key, d.dest, up.status().message());
  }
  co_return Dispatched{};
}

asio::awaitable<void> TcpNatService::Session(std::shared_ptr<TcpNatService> self,
                                             asio::ip::tcp::socket client) {
  asio::error_code ec;
  const auto remote = client.remote_endpoint(ec);
  if (ec) co_return;
  ServiceViewPtr view = self->picker_.view();  // this flow keeps the view it started with
  if (!view) co_return;
  const vservice::AddrPort caddr{FromAsio(remote.address()), remote.port()};
  ServiceStats& svc = *view->stats;
  std::shared_ptr<DestStats> dest;
  std::optional<asio::ip::tcp::socket> upstream;
  std::optional<OpenFlows::iterator> registered;
  auto closer = std::make_shared<net::ProxyHandle>();
  Dispatched got = co_await Dispatch(self, view, caddr);
  if (got.out_of_descriptors) {
    Bump(svc.no_descriptor);
    co_return;  // closed at once: the client is refused, not left waiting
  }
  if (got.socket) {
    upstream.emplace(std::move(*got.socket));
    dest = view->dests[got.index].stats;
    const vservice::AddrPort& addr = view->dests[got.index].dest;
    registered = self->open_.emplace(addr, OpenFlow{caddr, false, closer});
    // A view that came while this connect was under way may already have ended its flows.
    if (const ServiceViewPtr& now = self->picker_.view(); now != view) {
      for (const FlowsToEndEntry& e :
           FlowsToEnd(view.get(), *now, self->options_.expire_nodest_conn)) {
        if (e.dest == addr && !e.sorry) closer->Close(EndReasonText(e));
      }
    }
  } else if (view->config.sorry_server && view->sorry_stats) {
    auto up = co_await net::Connect(self->io_.get_executor(), Endpoint(*view->config.sorry_server),
                                    self->options_.connect_timeout);
    if (up.ok()) {
      upstream.emplace(std::move(up).value());
      dest = view->sorry_stats;
      Bump(svc.to_sorry);
      registered = self->open_.emplace(*view->config.sorry_server, OpenFlow{caddr, true, closer});
    } else if (up.status().code() == Code::kResourceExhausted) {
      Bump(svc.no_descriptor);
      co_return;
    }
  }
  if (!upstream) {
    Bump(svc.no_dest);
    co_return;  // closing the socket tells the client there is no server
  }
  Bump(svc.conns);
  Bump(dest->conns);
  Bump(dest->active);  // while the connection is open
  net::ProxyOptions po = self->options_.proxy;
  po.live_bytes = {{{&dest->bytes_in, &svc.bytes_in}, {&dest->bytes_out, &svc.bytes_out}}};
  po.live_writes = {{{&dest->packets_in, &svc.packets_in}, {&dest->packets_out, &svc.packets_out}}};
  po.handle = closer;
  // The proxy goes on without this coroutine: an open connection holds the proxy's state, not
  // a coroutine frame. Its end drops the accounting; the counters the meters write to live as
  // long as it does.
  net::StartProxy(std::move(client), std::move(*upstream), po,
                  [self, svc_stats = view->stats, dest, registered](const net::ProxyResult&) {
                    Drop(dest->active);
                    if (registered) self->open_.erase(*registered);
                  });
}

}  // namespace vsc::director

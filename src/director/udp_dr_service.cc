#include "director/udp_dr_service.h"

#include <arpa/inet.h>

#include <cstring>

#include "director/tcp_nat_service.h"
#include "proto/lookup_codec.h"

namespace vsc::director {
namespace {

net::SockAddr SockAddr(const vservice::AddrPort& ap) {
  return net::ToSockAddr({ToAsio(ap.addr), ap.port});
}

// The client as the table names addresses, and the forward header that names it to the real
// server: the IPv4 form (version 1, byte-identical to before IPv6) or the IPv6 one (version 2).
// An IPv4-mapped peer (a dual-stack socket) is the IPv4 client it maps.
struct Client {
  vservice::AddrPort addr;
  proto::ForwardHeader header;
};

Client ClientOf(const net::SockAddr& peer) {
  asio::ip::address a = net::ToUdpEndpoint(peer).address();
  if (a.is_v6() && a.to_v6().is_v4_mapped()) {
    a = asio::ip::make_address_v4(asio::ip::v4_mapped, a.to_v6());
  }
  const vservice::IpAddress ip = FromAsio(a);
  if (ip.is_v4()) return {{ip, peer.port()}, {ip.v4(), peer.port(), 0}};
  return {{ip, peer.port()}, proto::ForwardHeader::V6(ip.bytes(), peer.port())};
}

}  // namespace

void UdpDrService::Start() {
  socket_->Start([this](std::span<net::Datagram> in, net::SendBatch& out) { Handle(in, out); });
  ArmTruncatedTimer();
}

void UdpDrService::Stop() {
  socket_->Stop();
  truncated_timer_.cancel();
}

void UdpDrService::ArmTruncatedTimer() {
  truncated_timer_.expires_after(std::chrono::seconds(1));
  truncated_timer_.async_wait([weak = weak_from_this()](const asio::error_code& ec) {
    auto self = weak.lock();
    if (ec || !self) return;  // cancelled by Stop, or the service is gone
    if (const ServiceViewPtr& view = self->picker_.view()) self->SyncTruncated(*view->stats);
    self->ArmTruncatedTimer();
  });
}

void UdpDrService::SyncTruncated(ServiceStats& svc) {
  const uint64_t now = socket_->stats().rx_truncated;
  if (now == truncated_seen_) return;
  const uint64_t n = now - truncated_seen_;
  truncated_seen_ = now;
  Bump(svc.packets_in, n);
  Bump(svc.malformed, n);
}

void UdpDrService::Handle(std::span<net::Datagram> in, net::SendBatch& out) {
  const ServiceViewPtr view = picker_.view();
  if (!view) return;  // the engine posts a view before Start
  ServiceStats& svc = *view->stats;
  const TimePoint now = clock_.Now();
  SyncTruncated(svc);
  for (net::Datagram& d : in) {
    Bump(svc.packets_in);
    Bump(svc.bytes_in, d.data.size());
    if (!proto::DecodeRequest(d.data).ok()) {
      Bump(svc.malformed);
      continue;
    }
    const size_t header = d.peer.is_v6() ? proto::kForwardHeaderV6Size : proto::kForwardHeaderSize;
    if (d.data.size() + header > proto::kMaxLookupDatagram) {
      Bump(svc.too_large);
      continue;
    }
    if (!Forward(*view, d, now, out)) Bump(svc.no_dest);
  }
}

bool UdpDrService::Forward(const ServiceView& view, net::Datagram& d, TimePoint now,
                           net::SendBatch& out) {
  const Client client = ClientOf(d.peer);
  std::optional<size_t> pick = picker_.Pick(client.addr, now);
  if (!pick) return false;
  const DestView& dest = view.dests[*pick];
  const size_t header = client.header.size();
  std::span<uint8_t> buf = out.Prepare(header + d.data.size());
  proto::WriteForwardHeader(client.header, buf);
  std::memcpy(buf.data() + header, d.data.data(), d.data.size());
  out.Commit(header + d.data.size(), SockAddr(dest.dest));
  DestStats& ds = *dest.stats;
  Bump(ds.active);  // recent requests, decayed by the engine
  Bump(ds.conns);
  Bump(ds.packets_in);
  Bump(ds.bytes_in, d.data.size());
  Bump(view.stats->conns);
  return true;
}

}  // namespace vsc::director

#include "director/udp_dr_service.h"

#include <arpa/inet.h>

#include <cstring>

#include "director/forward_client.h"
#include "director/tcp_nat_service.h"
#include "proto/lookup_codec.h"

namespace vsc::director {
namespace {

net::SockAddr SockAddr(const vservice::AddrPort& ap) {
  return net::ToSockAddr({ToAsio(ap.addr), ap.port});
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
  const ForwardClient client = ForwardClientOf(d.peer);
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

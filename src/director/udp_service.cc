#include "director/udp_service.h"

#include <arpa/inet.h>

#include <cstring>

#include "proto/lookup_codec.h"

namespace vsc::director {

void UdpService::Start(std::unique_ptr<net::UdpBatchSocket> socket, Duration decay_period) {
  socket_ = std::move(socket);
  socket_->Start([this](std::span<net::Datagram> in, net::SendBatch& out) { Handle(in, out); });
  decay_period_ = decay_period;
  ArmDecay();
}

void UdpService::ArmDecay() {
  decay_timer_.expires_after(decay_period_);
  decay_timer_.async_wait([this](const asio::error_code& ec) {
    if (ec) return;  // cancelled by Stop
    sched_.Decay();
    SyncTruncated();
    ArmDecay();
  });
}

void UdpService::SyncTruncated() {
  const uint64_t now = socket_->stats().rx_truncated;
  if (now == truncated_seen_) return;
  const uint64_t n = now - truncated_seen_;
  truncated_seen_ = now;
  counters_.rx_datagrams.Add(n);
  counters_.services[kUdpService].in_packets.Add(n);
  counters_.dropped_malformed.Add(n);
}

void UdpService::Stop() {
  decay_timer_.cancel();
  if (socket_) socket_->Stop();
}

uint16_t UdpService::local_port() const { return socket_ ? socket_->local_port() : 0; }

void UdpService::Handle(std::span<net::Datagram> in, net::SendBatch& out) {
  const ViewPtr& view = sched_.view();
  const TimePoint now = clock_.Now();
  ServiceCounters& svc = counters_.services[kUdpService];
  SyncTruncated();
  for (net::Datagram& d : in) {
    counters_.rx_datagrams.Add();
    svc.in_packets.Add();
    svc.in_bytes.Add(d.data.size());
    // Validate before forwarding: a real server must never see garbage from the director.
    if (!proto::DecodeRequest(d.data).ok()) {
      counters_.dropped_malformed.Add();
      continue;
    }
    if (d.data.size() + proto::kForwardHeaderSize > proto::kMaxLookupDatagram) {
      counters_.dropped_too_large.Add();
      continue;
    }
    sched::Flow flow{ntohl(d.peer.sin_addr.s_addr), ntohs(d.peer.sin_port)};
    std::optional<size_t> pick = view ? sched_.Pick(flow, now) : std::nullopt;
    if (!pick) {
      counters_.dropped_no_server.Add();
      continue;
    }
    const ViewServer& server = sched_.servers()[*pick];
    std::span<uint8_t> buf = out.Prepare(proto::kForwardHeaderSize + d.data.size());
    proto::ForwardHeader header{flow.client_ip, flow.client_port, 0};
    proto::EncodeForwardHeader(header, buf.first<proto::kForwardHeaderSize>());
    std::memcpy(buf.data() + proto::kForwardHeaderSize, d.data.data(), d.data.size());
    out.Commit(proto::kForwardHeaderSize + d.data.size(), server.address);
    sched_.Acquire(*pick);
    ServerCounters& sc = counters_.servers[kUdpService][server.slot];
    sc.conns.Add();
    sc.in_packets.Add();
    sc.in_bytes.Add(d.data.size());
    svc.conns.Add();
    counters_.forwarded.Add();
  }
}

}  // namespace vsc::director

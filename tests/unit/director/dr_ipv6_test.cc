// `dr` for an IPv6 client, over real sockets on ::1 (issue 12): the director's UdpDrService on
// [::1]:VIP prepends the forward header's IPv6 form (version 2) and sends the request to the
// real server; the real server's LookupService on [::1], which trusts the director, decodes it
// and answers the IPv6 client directly, from its own address (the director never sees the
// answer).
#include <gtest/gtest.h>

#include <asio.hpp>
#include <chrono>
#include <memory>

#include "common/clock.h"
#include "director/service_view_builder.h"
#include "director/udp_dr_service.h"
#include "net/udp_batch.h"
#include "proto/lookup_codec.h"
#include "realserver/load_monitor.h"
#include "realserver/lookup_service.h"

namespace vsc::director {
namespace {

using namespace std::chrono_literals;
using asio::ip::udp;

TEST(DrIpv6Test, AnIpv6ClientIsForwardedWithTheIpv6HeaderAndAnsweredByTheRealServer) {
  asio::io_context io(1);
  RealClock clock;
  const asio::ip::address loopback6 = asio::ip::address_v6::loopback();

  realserver::LoadTracker load;
  realserver::LookupService rs(io, clock, std::nullopt, load, {loopback6});
  ASSERT_TRUE(rs.Start(loopback6, 0, 0).ok());

  auto socket = net::UdpBatchSocket::Bind(io, {loopback6, 0}, {});
  ASSERT_TRUE(socket.ok()) << socket.status().ToString();
  const uint16_t vip_port = (*socket)->local_port();
  vservice::VirtualService vs;
  vs.key = {vservice::Proto::kUdp, *vservice::IpAddress::Parse("::1"), vip_port};
  vservice::DestConfig dr_dest;
  dr_dest.method = vservice::Method::kDr;
  vs.dests[{*vservice::IpAddress::Parse("::1"), rs.lookup_port()}] = dr_dest;
  std::vector<DestInputs> inputs(1);
  inputs[0].stats = std::make_shared<DestStats>();
  std::shared_ptr<ServiceView> built = BuildServiceView(vs, inputs, 1);
  built->stats = std::make_shared<ServiceStats>();  // the engine's, shared by its views
  const ServiceViewPtr view = built;
  auto dr = std::make_shared<UdpDrService>(io, clock, sched::SchedulerOptions{},
                                           std::move(socket).value());
  dr->OnView(view);
  dr->Start();

  udp::socket client(io, {loopback6, 0});
  client.non_blocking(true);
  std::array<uint8_t, proto::kMaxRequestSize> req{};
  const uint64_t ids[] = {42};
  const size_t n = proto::EncodeRequest(proto::LookupRequest::Of(77, ids), req);
  client.send_to(asio::buffer(req.data(), n), udp::endpoint(loopback6, vip_port));

  std::array<uint8_t, proto::kMaxResponseSize> got{};
  udp::endpoint from;
  size_t m = 0;
  asio::error_code ec = asio::error::would_block;
  const auto end = std::chrono::steady_clock::now() + 10s;
  while (ec && std::chrono::steady_clock::now() < end) {
    if (io.stopped()) io.restart();
    io.run_one_for(5ms);
    m = client.receive_from(asio::buffer(got), from, 0, ec);
  }
  ASSERT_FALSE(ec) << "no answer reached the IPv6 client: " << ec.message();
  auto response = proto::DecodeResponse(std::span<const uint8_t>(got.data(), m));
  ASSERT_TRUE(response.ok()) << response.status().ToString();
  EXPECT_EQ(response->request_id, 77u);
  // No database on this real server: it answers "internal", but it answers, and directly.
  EXPECT_EQ(response->status, proto::LookupStatus::kInternal);
  EXPECT_EQ(from, udp::endpoint(loopback6, rs.lookup_port())) << "not answered by the RS itself";
  EXPECT_EQ(rs.counters().forwarded.Get(), 1u);
  EXPECT_EQ(rs.counters().dropped_malformed.Get(), 0u);
  EXPECT_EQ(Read(view->dests[0].stats->conns), 1u);
  dr->Stop();
  rs.Stop();
}

}  // namespace
}  // namespace vsc::director

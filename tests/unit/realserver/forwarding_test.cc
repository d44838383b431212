#include "realserver/forwarding.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <array>
#include <cstring>

#include "proto/lookup_codec.h"

namespace vsc::realserver {
namespace {

sockaddr_in Addr(uint32_t ip, uint16_t port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(ip);
  a.sin_port = htons(port);
  return a;
}

std::vector<uint8_t> Forwarded(uint32_t client_ip, uint16_t client_port) {
  std::vector<uint8_t> d(proto::kForwardHeaderSize + 3, 0);
  proto::EncodeForwardHeader(
      {client_ip, client_port, 0},
      std::span<uint8_t, proto::kForwardHeaderSize>(d.data(), proto::kForwardHeaderSize));
  d[proto::kForwardHeaderSize] = 'a';
  d[proto::kForwardHeaderSize + 1] = 'b';
  d[proto::kForwardHeaderSize + 2] = 'c';
  return d;
}

const std::vector<asio::ip::address> kTrusted = {
    asio::ip::make_address("10.0.0.1")};  // the director

TEST(ForwardingTest, PlainRequestIsAnsweredToItsSender) {
  const std::array<uint8_t, 3> plain = {'V', 'L', 1};
  Inbound in = ResolveForwarding(plain, Addr(0x0a000009, 5000), kTrusted);
  EXPECT_EQ(in.verdict, Inbound::Verdict::kDirect);
  EXPECT_EQ(in.payload.size(), 3u);
  EXPECT_EQ(in.reply_to.port(), 5000);
}

TEST(ForwardingTest, TrustedForwarderNamesTheClient) {
  auto d = Forwarded(0xc0a80105, 4242);
  Inbound in = ResolveForwarding(d, Addr(0x0a000001, 7000), kTrusted);
  ASSERT_EQ(in.verdict, Inbound::Verdict::kForwarded);
  ASSERT_FALSE(in.reply_to.is_v6());
  EXPECT_EQ(ntohl(in.reply_to.v4.sin_addr.s_addr), 0xc0a80105u);
  EXPECT_EQ(in.reply_to.port(), 4242);
  ASSERT_EQ(in.payload.size(), 3u);
  EXPECT_EQ(in.payload[0], 'a');
}

TEST(ForwardingTest, AnyoneElseCannotRedirectAnswers) {
  auto d = Forwarded(0xc0a80105, 4242);
  EXPECT_EQ(ResolveForwarding(d, Addr(0x0a000002, 7000), kTrusted).verdict,
            Inbound::Verdict::kUntrusted);
}

TEST(ForwardingTest, BrokenHeaderIsMalformed) {
  auto d = Forwarded(0, 4242);  // address 0.0.0.0 is refused by the decoder
  EXPECT_EQ(ResolveForwarding(d, Addr(0x0a000001, 7000), kTrusted).verdict,
            Inbound::Verdict::kMalformed);
  const std::array<uint8_t, 4> short_header = {'V', 'F', 1, 0};
  EXPECT_EQ(ResolveForwarding(short_header, Addr(0x0a000001, 7000), kTrusted).verdict,
            Inbound::Verdict::kMalformed);
}

// The IPv6 form (version 2): the client it names is answered over IPv6, from the director's
// IPv4 address or from an IPv6 forwarder in the trusted list; the payload starts after its 24
// bytes; an IPv4-mapped client in it is malformed.
TEST(ForwardingTest, TheIpv6FormNamesAnIpv6Client) {
  std::array<uint8_t, 16> client{0x20, 0x01, 0x0d, 0xb8};
  client[15] = 0x0a;  // 2001:db8::a
  std::vector<uint8_t> d(proto::kForwardHeaderV6Size);
  ASSERT_EQ(proto::WriteForwardHeader(proto::ForwardHeader::V6(client, 4242), d), d.size());
  d.insert(d.end(), {'a', 'b', 'c'});
  sockaddr_in6 director6{};
  director6.sin6_family = AF_INET6;
  director6.sin6_addr = in6addr_loopback;
  director6.sin6_port = htons(7000);
  const std::vector<asio::ip::address> trusted = {asio::ip::make_address("10.0.0.1"),
                                                  asio::ip::make_address("::1")};
  for (const net::SockAddr& from :
       {net::SockAddr(Addr(0x0a000001, 7000)), net::SockAddr(director6)}) {
    Inbound in = ResolveForwarding(d, from, trusted);
    ASSERT_EQ(in.verdict, Inbound::Verdict::kForwarded);
    ASSERT_TRUE(in.reply_to.is_v6());
    EXPECT_EQ(std::memcmp(&in.reply_to.v6.sin6_addr, client.data(), 16), 0);
    EXPECT_EQ(in.reply_to.port(), 4242);
    ASSERT_EQ(in.payload.size(), 3u);
    EXPECT_EQ(in.payload[0], 'a');
  }
  EXPECT_EQ(ResolveForwarding(d, director6, kTrusted).verdict, Inbound::Verdict::kUntrusted);
  std::array<uint8_t, 16> mapped{};
  mapped[10] = mapped[11] = 0xff;
  mapped[15] = 1;
  ASSERT_EQ(proto::WriteForwardHeader(proto::ForwardHeader::V6(mapped, 4242), d), 24u);
  EXPECT_EQ(ResolveForwarding(d, Addr(0x0a000001, 7000), trusted).verdict,
            Inbound::Verdict::kMalformed);
}

}  // namespace
}  // namespace vsc::realserver

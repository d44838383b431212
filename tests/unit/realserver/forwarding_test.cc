#include "realserver/forwarding.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <array>

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
  proto::EncodeForwardHeader({client_ip, client_port, 0},
                             std::span<uint8_t, proto::kForwardHeaderSize>(d.data(), proto::kForwardHeaderSize));
  d[proto::kForwardHeaderSize] = 'a';
  d[proto::kForwardHeaderSize + 1] = 'b';
  d[proto::kForwardHeaderSize + 2] = 'c';
  return d;
}

const std::vector<uint32_t> kTrusted = {0x0a000001};  // the director, 10.0.0.1

TEST(ForwardingTest, PlainRequestIsAnsweredToItsSender) {
  const std::array<uint8_t, 3> plain = {'V', 'L', 1};
  Inbound in = ResolveForwarding(plain, Addr(0x0a000009, 5000), kTrusted);
  EXPECT_EQ(in.verdict, Inbound::Verdict::kDirect);
  EXPECT_EQ(in.payload.size(), 3u);
  EXPECT_EQ(ntohs(in.reply_to.sin_port), 5000);
}

TEST(ForwardingTest, TrustedForwarderNamesTheClient) {
  auto d = Forwarded(0xc0a80105, 4242);
  Inbound in = ResolveForwarding(d, Addr(0x0a000001, 7000), kTrusted);
  ASSERT_EQ(in.verdict, Inbound::Verdict::kForwarded);
  EXPECT_EQ(ntohl(in.reply_to.sin_addr.s_addr), 0xc0a80105u);
  EXPECT_EQ(ntohs(in.reply_to.sin_port), 4242);
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

}  // namespace
}  // namespace vsc::realserver

// The forward header's IPv6 form (version 2, docs/protocol.md "Forward header"): round trip,
// every truncation and every corrupted byte refused or canonical, the faults that are its own
// (::, an IPv4-mapped address, port 0), the IPv4 form left byte-identical, and validation of
// malformed headers that allocates nothing (CheckForwardHeader, the real server's path).
#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <cstdlib>
#include <new>
#include <vector>

#include "common/random.h"
#include "doc_vectors.h"
#include "proto/lookup_codec.h"

namespace {
// Allocations made on this thread while counting is on (operator new below).
thread_local bool counting = false;
thread_local size_t allocations = 0;
}  // namespace

// malloc and free under the replaced operators, as a replacement must (GCC cannot tell).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void* operator new(size_t n) {
  if (counting) ++allocations;
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
#pragma GCC diagnostic pop

namespace vsc::proto {
namespace {

using Bytes = std::vector<uint8_t>;

Bytes Encode(const ForwardHeader& h) {
  Bytes out(kMaxForwardHeaderSize);
  out.resize(WriteForwardHeader(h, out));
  return out;
}

ForwardHeader RandomV6(Random& rng) {
  std::array<uint8_t, 16> a;
  for (auto& b : a) b = static_cast<uint8_t>(rng.Uniform(256));
  a[0] = static_cast<uint8_t>(0x20 | (a[0] & 0x0f));  // never ::, never ::ffff:0:0/96
  return ForwardHeader::V6(a, static_cast<uint16_t>(1 + rng.Uniform(0xffff)),
                           static_cast<uint8_t>(rng.Uniform(256)));
}

void ExpectRejectedOrCanonical(const Bytes& b) {
  auto h = DecodeForwardHeader(b);
  if (h.ok()) {
    EXPECT_EQ(Encode(*h), Bytes(b.begin(), b.begin() + h->size()));
  } else {
    EXPECT_EQ(h.status().message().rfind("forward header: ", 0), 0u) << h.status().message();
  }
}

TEST(ForwardHeaderV6, RoundTripsAndLeavesTheRequestIntact) {
  Random rng(21);
  for (int i = 0; i < 2000; ++i) {
    const ForwardHeader h = RandomV6(rng);
    Bytes datagram = Encode(h);
    ASSERT_EQ(datagram.size(), kForwardHeaderV6Size);
    const uint64_t ids[] = {rng.Next()};
    Bytes req(kMaxRequestSize);
    req.resize(EncodeRequest(LookupRequest::Of(rng.Next(), ids), req));
    datagram.insert(datagram.end(), req.begin(), req.end());
    ASSERT_TRUE(HasForwardHeader(datagram));
    auto d = DecodeForwardHeader(datagram);
    ASSERT_TRUE(d.ok()) << d.status().ToString();
    EXPECT_TRUE(d->ipv6);
    EXPECT_EQ(d->client_ip6, h.client_ip6);
    EXPECT_EQ(d->client_port, h.client_port);
    EXPECT_EQ(d->flags, h.flags);
    EXPECT_EQ(d->size(), kForwardHeaderV6Size);
    EXPECT_TRUE(DecodeRequest(std::span(datagram).subspan(d->size())).ok());
  }
}

TEST(ForwardHeaderV6, EveryTruncationAndCorruptionIsRefusedOrCanonical) {
  Random rng(22);
  for (int i = 0; i < 30; ++i) {
    const Bytes b = Encode(RandomV6(rng));
    for (size_t n = 0; n < b.size(); ++n) {
      EXPECT_FALSE(DecodeForwardHeader(std::span(b).first(n)).ok()) << n;
      if (n > 2) {
        EXPECT_EQ(CheckForwardHeader(std::span(b).first(n)).fault, ForwardFault::kTruncated);
      }
    }
    for (size_t pos = 0; pos < b.size(); ++pos) {
      for (int v = 0; v < 256; ++v) {
        if (v == b[pos]) continue;
        Bytes c = b;
        c[pos] = static_cast<uint8_t>(v);
        if (pos < 2 || pos >= 22 || (pos == 2 && v != kLookupVersion)) {
          EXPECT_FALSE(DecodeForwardHeader(c).ok()) << "pos " << pos << " value " << v;
        } else {
          ExpectRejectedOrCanonical(c);  // pos 2 = 1: read as the IPv4 form, if it is one
        }
      }
    }
  }
}

TEST(ForwardHeaderV6, UnspecifiedMappedAndZeroPortAreRefused) {
  std::array<uint8_t, 16> any{};
  EXPECT_EQ(DecodeForwardHeader(Encode(ForwardHeader::V6(any, 80))).status().message(),
            "forward header: client address ::");
  std::array<uint8_t, 16> mapped{};
  mapped[10] = mapped[11] = 0xff;
  mapped[12] = 127;
  mapped[15] = 1;
  EXPECT_EQ(CheckForwardHeader(Encode(ForwardHeader::V6(mapped, 80))).fault,
            ForwardFault::kMappedIpv4);
  std::array<uint8_t, 16> loopback{};
  loopback[15] = 1;
  EXPECT_EQ(DecodeForwardHeader(Encode(ForwardHeader::V6(loopback, 0))).status().message(),
            "forward header: client port 0");
  Bytes three = Encode(ForwardHeader::V6(loopback, 80));
  three[2] = 3;
  EXPECT_EQ(DecodeForwardHeader(three).status().message(),
            "forward header: unsupported version 3 (this build speaks version 1, IPv4, and 2, "
            "IPv6)");
  EXPECT_EQ(DecodeForwardHeader(std::span(three).first(12)).status().message(),
            "forward header: unsupported version 3 (this build speaks version 1, IPv4, and 2, "
            "IPv6)");
  EXPECT_EQ(DecodeForwardHeader(std::span(three).first(10)).status().message(),
            "forward header: truncated (10 of 12 bytes)");
  const Bytes whole = Encode(ForwardHeader::V6(loopback, 80));
  EXPECT_EQ(DecodeForwardHeader(std::span(whole).first(23)).status().message(),
            "forward header: truncated (23 of 24 bytes)");
}

// The documented vectors: the IPv6 form, and the IPv4 form unchanged by it.
TEST(ForwardHeaderV6, DocumentedVectorsMatchTheCodec) {
  const auto v = testing::ProtocolDocVectors();
  ASSERT_EQ(v.count("forward-header-v6"), 1u);
  std::array<uint8_t, 16> a{0x20, 0x01, 0x0d, 0xb8};
  a[15] = 0x0a;  // 2001:db8::a
  EXPECT_EQ(Encode(ForwardHeader::V6(a, 40000)), v.at("forward-header-v6"));
  EXPECT_EQ(Encode(ForwardHeader{0xc000020a, 40000, 0}), v.at("forward-header"));
  auto d = DecodeForwardHeader(v.at("forward-header-v6"));
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->client_ip6, a);
}

// The real server checks every forwarded datagram: a malformed one must cost no allocation.
TEST(ForwardHeaderV6, CheckingMalformedHeadersAllocatesNothing) {
  Random rng(23);
  std::vector<Bytes> bad;
  for (const ForwardHeader& h : {RandomV6(rng), ForwardHeader{0x7f000001, 9, 0}}) {
    const Bytes b = Encode(h);
    for (size_t n = 0; n < b.size(); ++n) bad.emplace_back(b.begin(), b.begin() + n);
    for (size_t pos = 0; pos < b.size(); ++pos) {
      Bytes c = b;
      c[pos] ^= 0xff;
      bad.push_back(c);
    }
  }
  size_t refused = 0;
  counting = true;
  allocations = 0;
  for (const Bytes& b : bad) refused += CheckForwardHeader(b).fault != ForwardFault::kNone;
  counting = false;
  EXPECT_EQ(allocations, 0u);
  EXPECT_GT(refused, bad.size() / 2);
  // The counter counts: the message-building decoder does allocate.
  counting = true;
  (void)DecodeForwardHeader(bad.front());
  counting = false;
  EXPECT_GT(allocations, 0u);
}

}  // namespace
}  // namespace vsc::proto

#include "proto/lookup_codec.h"

#include <gtest/gtest.h>

#include <array>
#include <string>
#include <vector>

#include "common/random.h"
#include "doc_vectors.h"

namespace vsc::proto {
namespace {

using Bytes = std::vector<uint8_t>;

Bytes Encode(const LookupRequest& r) {
  Bytes out(kMaxRequestSize);
  out.resize(EncodeRequest(r, out));
  return out;
}

Bytes Encode(const LookupResponse& r) {
  Bytes out(kMaxResponseSize);
  out.resize(EncodeResponse(r, out));
  return out;
}

Bytes EncodeV4Header(const ForwardHeader& h) {
  Bytes out(kForwardHeaderSize);
  EncodeForwardHeader(h, std::span<uint8_t, kForwardHeaderSize>(out.data(), kForwardHeaderSize));
  return out;
}

LookupRequest RandomRequest(Random& rng) {
  LookupRequest r;
  r.request_id = rng.Next();
  r.count = static_cast<uint8_t>(1 + rng.Uniform(kMaxLookupIds));
  for (size_t i = 0; i < r.count; ++i) r.ids[i] = rng.Next() >> rng.Uniform(64);
  return r;
}

LookupResponse RandomResponse(Random& rng) {
  LookupResponse r;
  r.request_id = rng.Next();
  if (rng.Uniform(5) == 0) {
    r.status = static_cast<LookupStatus>(1 + rng.Uniform(3));
    return r;
  }
  const size_t n = rng.Uniform(kMaxLookupIds + 1);
  for (size_t i = 0; i < n; ++i) {
    LookupAnswer a;
    a.id = rng.Next() >> rng.Uniform(64);
    a.found = rng.Uniform(3) != 0;
    if (a.found) {
      const size_t len = rng.Uniform(kMaxNodeLen + 1);
      for (size_t k = 0; k < len; ++k) a.node.push_back(static_cast<char>(rng.Uniform(256)));
    }
    r.answers.push_back(std::move(a));
  }
  return r;
}

ForwardHeader RandomForward(Random& rng) {
  ForwardHeader h;
  h.client_ip = static_cast<uint32_t>(1 + rng.Uniform(0xffffffffULL));
  h.client_port = static_cast<uint16_t>(1 + rng.Uniform(0xffff));
  h.flags = static_cast<uint8_t>(rng.Uniform(256));
  return h;
}

// A decoder is canonical when everything it accepts re-encodes to the same bytes; combined with
// the structural checks this means a corrupted message is refused or visibly different.
void ExpectRequestRejectedOrCanonical(const Bytes& b) {
  auto v = DecodeRequest(b);
  if (v.ok()) {
    EXPECT_EQ(Encode(v->ToRequest()), b);
  } else {
    EXPECT_EQ(v.status().code(), Code::kInvalidArgument);
    EXPECT_EQ(v.status().message().rfind("lookup request: ", 0), 0u) << v.status().message();
  }
}

void ExpectResponseRejectedOrCanonical(const Bytes& b) {
  auto r = DecodeResponse(b);
  if (r.ok()) {
    EXPECT_EQ(Encode(*r), b);
  } else {
    EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
    EXPECT_EQ(r.status().message().rfind("lookup response: ", 0), 0u) << r.status().message();
  }
}

void ExpectForwardRejectedOrCanonical(const Bytes& b) {
  auto h = DecodeForwardHeader(b);
  if (h.ok()) {
    EXPECT_EQ(EncodeV4Header(*h), Bytes(b.begin(), b.begin() + kForwardHeaderSize));
  } else {
    EXPECT_EQ(h.status().message().rfind("forward header: ", 0), 0u) << h.status().message();
  }
}

TEST(LookupCodecTest, RequestRoundTripsOverRandomRequests) {
  Random rng(1);
  for (int i = 0; i < 2000; ++i) {
    const LookupRequest r = RandomRequest(rng);
    const Bytes b = Encode(r);
    ASSERT_EQ(b.size(), RequestSize(r.count));
    auto v = DecodeRequest(b);
    ASSERT_TRUE(v.ok()) << v.status().ToString();
    EXPECT_EQ(v->request_id(), r.request_id);
    ASSERT_EQ(v->count(), r.count);
    for (size_t k = 0; k < r.count; ++k) EXPECT_EQ(v->id(k), r.ids[k]);
    const LookupRequest back = v->ToRequest();
    EXPECT_TRUE(std::equal(back.Ids().begin(), back.Ids().end(), r.Ids().begin(), r.Ids().end()));
  }
}

TEST(LookupCodecTest, EncodeRequestRefusesSmallBufferAndBadCounts) {
  const uint64_t ids[] = {1, 2, 3};
  LookupRequest r = LookupRequest::Of(7, ids);
  std::array<uint8_t, kMaxRequestSize> buf{};
  EXPECT_EQ(EncodeRequest(r, std::span<uint8_t>(buf).first(RequestSize(3) - 1)), 0u);
  EXPECT_EQ(EncodeRequest(r, std::span<uint8_t>(buf).first(RequestSize(3))), RequestSize(3));
  r.count = 0;
  EXPECT_EQ(EncodeRequest(r, buf), 0u);
  r.count = 11;
  EXPECT_EQ(EncodeRequest(r, buf), 0u);
  std::vector<uint64_t> eleven(11, 5);
  EXPECT_EQ(LookupRequest::Of(1, eleven).count, 0);
  EXPECT_EQ(LookupRequest::Of(1, {}).count, 0);
}

TEST(LookupCodecTest, RequestCountsZeroAndElevenAreRefusedByName) {
  const uint64_t ids[] = {9};
  Bytes b = Encode(LookupRequest::Of(1, ids));
  b[12] = 0;
  b.resize(kRequestHeaderSize);
  auto zero = DecodeRequest(b);
  ASSERT_FALSE(zero.ok());
  EXPECT_EQ(zero.status().message(), "lookup request: count 0; send 1 to 10 ids");

  b[12] = 11;
  b.resize(RequestSize(11), 0);
  auto eleven = DecodeRequest(b);
  ASSERT_FALSE(eleven.ok());
  EXPECT_EQ(eleven.status().message(), "lookup request: count 11 exceeds the limit of 10 ids");
}

TEST(LookupCodecTest, EveryTruncationAndExtensionOfARequestIsRefused) {
  Random rng(2);
  for (int i = 0; i < 200; ++i) {
    const Bytes b = Encode(RandomRequest(rng));
    for (size_t n = 0; n < b.size(); ++n) {
      EXPECT_FALSE(DecodeRequest(std::span(b).first(n)).ok()) << "prefix " << n;
    }
    Bytes longer = b;
    longer.push_back(0);
    EXPECT_FALSE(DecodeRequest(longer).ok());
  }
}

TEST(LookupCodecTest, EveryByteCorruptionOfARequestIsRefusedOrCanonical) {
  Random rng(3);
  for (int i = 0; i < 20; ++i) {
    const Bytes b = Encode(RandomRequest(rng));
    for (size_t pos = 0; pos < b.size(); ++pos) {
      for (int v = 0; v < 256; ++v) {
        if (v == b[pos]) continue;
        Bytes c = b;
        c[pos] = static_cast<uint8_t>(v);
        if (pos < 4 || pos == 12) {
          EXPECT_FALSE(DecodeRequest(c).ok()) << "pos " << pos << " value " << v;
        } else {
          ExpectRequestRejectedOrCanonical(c);
        }
      }
    }
  }
}

TEST(LookupCodecTest, ResponseRoundTripsOverRandomResponses) {
  Random rng(4);
  for (int i = 0; i < 2000; ++i) {
    const LookupResponse r = RandomResponse(rng);
    const Bytes b = Encode(r);
    ASSERT_GE(b.size(), kResponseHeaderSize);
    ASSERT_LE(b.size(), kMaxResponseSize);
    auto d = DecodeResponse(b);
    ASSERT_TRUE(d.ok()) << d.status().ToString();
    EXPECT_EQ(*d, r);
  }
}

TEST(LookupCodecTest, LargestResponseFitsOneDatagram) {
  LookupResponse r;
  for (size_t i = 0; i < kMaxLookupIds; ++i) r.answers.push_back({i, true, std::string(64, 'n')});
  const Bytes b = Encode(r);
  EXPECT_EQ(b.size(), kMaxResponseSize);
  EXPECT_LE(b.size(), kMaxLookupDatagram);
}

TEST(LookupCodecTest, EveryTruncationAndExtensionOfAResponseIsRefused) {
  Random rng(5);
  for (int i = 0; i < 200; ++i) {
    const Bytes b = Encode(RandomResponse(rng));
    for (size_t n = 0; n < b.size(); ++n) {
      EXPECT_FALSE(DecodeResponse(std::span(b).first(n)).ok()) << "prefix " << n;
    }
    Bytes longer = b;
    longer.push_back(0);
    EXPECT_FALSE(DecodeResponse(longer).ok());
  }
}

TEST(LookupCodecTest, EveryByteCorruptionOfAResponseIsRefusedOrCanonical) {
  Random rng(6);
  for (int i = 0; i < 8; ++i) {
    const Bytes b = Encode(RandomResponse(rng));
    for (size_t pos = 0; pos < b.size(); ++pos) {
      for (int v = 0; v < 256; ++v) {
        if (v == b[pos]) continue;
        Bytes c = b;
        c[pos] = static_cast<uint8_t>(v);
        if (pos < 4) {
          EXPECT_FALSE(DecodeResponse(c).ok()) << "pos " << pos;
        } else {
          ExpectResponseRejectedOrCanonical(c);
        }
      }
    }
  }
}

TEST(LookupCodecTest, ResponseDecoderRefusesEachStructuralProblemByName) {
  const LookupResponse ok{5, LookupStatus::kOk, {{1, true, "a"}, {2, false, ""}}};
  const Bytes b = Encode(ok);
  auto refuse = [](Bytes c, const std::string& fragment) {
    auto r = DecodeResponse(c);
    ASSERT_FALSE(r.ok()) << fragment;
    EXPECT_NE(r.status().message().find(fragment), std::string::npos) << r.status().message();
  };
  Bytes c = b;
  c[12] = 4;
  refuse(c, "unknown status 4");
  c = b;
  c[12] = 2;
  refuse(c, "answers on a non-ok status");
  c = b;
  c[13] = 11;
  refuse(c, "count 11 exceeds the limit of 10 answers");
  c = b;
  c[14 + 8] = 2;
  refuse(c, "found flag 2");
  c = b;
  c[14 + 9] = 65;
  refuse(c, "node_len 65 exceeds the limit of 64");
  c = b;
  c[14 + 11 + 9] = 1;  // the second answer is not found but claims one byte of node name
  c.push_back('x');
  refuse(c, "node name on a not-found answer");
  c = b;
  c[3] = 1;
  refuse(c, "wrong message type 1");
  c = b;
  c[2] = 2;
  refuse(c, "unsupported version 2");
}

TEST(LookupCodecTest, ResponseWriterRefusesOversizeNodesAndTooManyAnswers) {
  std::array<uint8_t, kMaxLookupDatagram> buf{};
  {
    ResponseWriter w(buf, 1, LookupStatus::kOk);
    const Status st = w.Add(1, true, std::string(65, 'x'));
    EXPECT_NE(st.message().find("65 bytes exceeds the limit of 64"), std::string::npos);
    EXPECT_EQ(w.Finish(), 0u);
  }
  {
    ResponseWriter w(buf, 1, LookupStatus::kOk);
    for (size_t i = 0; i < kMaxLookupIds; ++i) ASSERT_TRUE(w.Add(i, false, "").ok());
    EXPECT_FALSE(w.Add(11, false, "").ok());
    EXPECT_EQ(w.Finish(), 0u);
  }
  {
    ResponseWriter w(buf, 1, LookupStatus::kOk);
    EXPECT_FALSE(w.Add(1, false, "node").ok());
  }
  {
    ResponseWriter w(buf, 1, LookupStatus::kOverloaded);
    EXPECT_FALSE(w.Add(1, true, "node").ok());
  }
  {
    // Exactly enough room for the header and one 3-byte answer, then nothing more.
    ResponseWriter w(std::span<uint8_t>(buf).first(kResponseHeaderSize + 13), 1, LookupStatus::kOk);
    EXPECT_TRUE(w.Add(1, true, "abc").ok());
    EXPECT_EQ(w.Add(2, false, "").code(), Code::kResourceExhausted);
  }
  {
    ResponseWriter w(std::span<uint8_t>(buf).first(kResponseHeaderSize - 1), 1, LookupStatus::kOk);
    EXPECT_EQ(w.Finish(), 0u);
  }
  EXPECT_EQ(EncodeErrorResponse(9, LookupStatus::kBadRequest, buf), kResponseHeaderSize);
  auto d = DecodeResponse(std::span(buf).first(kResponseHeaderSize));
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->status, LookupStatus::kBadRequest);
  EXPECT_EQ(d->request_id, 9u);
}

TEST(LookupCodecTest, ForwardHeaderRoundTripsAndLeavesTheRequestIntact) {
  Random rng(7);
  for (int i = 0; i < 2000; ++i) {
    const ForwardHeader h = RandomForward(rng);
    const LookupRequest r = RandomRequest(rng);
    Bytes datagram = EncodeV4Header(h);
    const Bytes req = Encode(r);
    datagram.insert(datagram.end(), req.begin(), req.end());
    ASSERT_TRUE(HasForwardHeader(datagram));
    EXPECT_FALSE(HasForwardHeader(req));
    auto d = DecodeForwardHeader(datagram);
    ASSERT_TRUE(d.ok()) << d.status().ToString();
    EXPECT_EQ(d->client_ip, h.client_ip);
    EXPECT_EQ(d->client_port, h.client_port);
    EXPECT_EQ(d->flags, h.flags);
    auto inner = DecodeRequest(std::span(datagram).subspan(kForwardHeaderSize));
    ASSERT_TRUE(inner.ok());
    EXPECT_EQ(inner->request_id(), r.request_id);
  }
}

TEST(LookupCodecTest, ForwardHeaderTruncationsAndCorruptionsAreRefusedOrCanonical) {
  Random rng(8);
  for (int i = 0; i < 50; ++i) {
    const Bytes b = EncodeV4Header(RandomForward(rng));
    for (size_t n = 0; n < b.size(); ++n) {
      EXPECT_FALSE(DecodeForwardHeader(std::span(b).first(n)).ok());
    }
    for (size_t pos = 0; pos < b.size(); ++pos) {
      for (int v = 0; v < 256; ++v) {
        if (v == b[pos]) continue;
        Bytes c = b;
        c[pos] = static_cast<uint8_t>(v);
        if (pos < 3 || pos >= 10) {
          EXPECT_FALSE(DecodeForwardHeader(c).ok()) << "pos " << pos;
        } else {
          ExpectForwardRejectedOrCanonical(c);
        }
      }
    }
  }
  ForwardHeader zero_ip{0, 80, 0};
  EXPECT_EQ(DecodeForwardHeader(EncodeV4Header(zero_ip)).status().message(),
            "forward header: client address 0.0.0.0");
  ForwardHeader zero_port{0x7f000001, 0, 0};
  EXPECT_EQ(DecodeForwardHeader(EncodeV4Header(zero_port)).status().message(),
            "forward header: client port 0");
}

// ---- the test vectors printed in docs/protocol.md ----

TEST(LookupCodecTest, DocumentedVectorsMatchTheCodec) {
  const auto v = testing::ProtocolDocVectors();
  ASSERT_EQ(v.count("request-two-ids"), 1u);
  ASSERT_EQ(v.count("forward-header"), 1u);
  ASSERT_EQ(v.count("response-found-and-missing"), 1u);
  ASSERT_EQ(v.count("response-overloaded"), 1u);
  ASSERT_EQ(v.count("tcp-framed-request"), 1u);

  const uint64_t ids[] = {1, 2'000'000};
  const LookupRequest req = LookupRequest::Of(0x0102030405060708, ids);
  EXPECT_EQ(Encode(req), v.at("request-two-ids"));
  auto dreq = DecodeRequest(v.at("request-two-ids"));
  ASSERT_TRUE(dreq.ok());
  EXPECT_EQ(dreq->id(1), 2'000'000u);

  const ForwardHeader fwd{0xc000020a /* 192.0.2.10 */, 40000, 0};
  EXPECT_EQ(EncodeV4Header(fwd), v.at("forward-header"));

  const LookupResponse resp{
      0x0102030405060708, LookupStatus::kOk, {{1, true, "cg-3"}, {2'000'000, false, ""}}};
  EXPECT_EQ(Encode(resp), v.at("response-found-and-missing"));
  auto dresp = DecodeResponse(v.at("response-found-and-missing"));
  ASSERT_TRUE(dresp.ok());
  EXPECT_EQ(*dresp, resp);

  const LookupResponse overloaded{42, LookupStatus::kOverloaded, {}};
  EXPECT_EQ(Encode(overloaded), v.at("response-overloaded"));

  // The TCP vector is the request with its 4-byte big-endian length in front.
  Bytes framed = {0, 0, 0, static_cast<uint8_t>(v.at("request-two-ids").size())};
  framed.insert(framed.end(), v.at("request-two-ids").begin(), v.at("request-two-ids").end());
  EXPECT_EQ(framed, v.at("tcp-framed-request"));
}

}  // namespace
}  // namespace vsc::proto

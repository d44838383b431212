#include "proto/envelope.h"

#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <string>
#include <vector>

#include "common/random.h"
#include "doc_vectors.h"
#include "key_fixtures.h"

namespace vsc::proto {
namespace {

using testing::Hex;
using testing::SequentialKey;

using Bytes = std::vector<uint8_t>;

Message SampleHeartbeat() {
  Message m;
  Heartbeat* hb = m.mutable_heartbeat();
  hb->set_id("rs1");
  hb->set_incarnation(1);
  hb->set_counter(7);
  hb->set_flags(Heartbeat::FLAG_FULL);
  return m;
}

// One message of each kind, with every field set.
std::vector<Message> AllKinds() {
  std::vector<Message> out;
  Message reg;
  Register* r = reg.mutable_register_();
  r->set_id("rs-17");
  r->set_incarnation(1'700'000'000'123'456);
  r->set_weight(3);
  Endpoint* e = r->add_endpoints();
  e->set_service("lookup-udp");
  e->set_host("10.0.0.17");
  e->set_port(7001);
  e = r->add_endpoints();
  e->set_service("http");
  e->set_host("10.0.0.17");
  e->set_port(8080);
  r->add_capabilities("lookup");
  r->add_capabilities("sql");
  r->set_applied_seq(99);
  r->set_digest(std::string("\x00\x01\xff", 3));
  out.push_back(reg);

  Message ack;
  RegisterAck* a = ack.mutable_register_ack();
  a->set_accepted(true);
  a->set_reason("welcome");
  a->set_heartbeat_port(7100);
  a->set_heartbeat_interval_ms(200);
  a->set_silent_after(2);
  a->set_down_after(5);
  out.push_back(ack);

  Message hb = SampleHeartbeat();
  Load* l = hb.mutable_heartbeat()->mutable_load();
  l->set_run_queue(1.5);
  l->set_cpu_pct(42.0);
  l->set_in_flight(12);
  l->set_queue_fill(0.25);
  l->set_response_ms(3.75);
  hb.mutable_heartbeat()->set_applied_seq(1234);
  hb.mutable_heartbeat()->set_digest("digest");
  out.push_back(hb);

  Message dereg;
  dereg.mutable_deregister()->set_id("rs-17");
  dereg.mutable_deregister()->set_reason("shutting down");
  out.push_back(dereg);

  Message cmd;
  cmd.mutable_command()->set_kind("weight");
  cmd.mutable_command()->set_weight(0);
  out.push_back(cmd);

  out.emplace_back();  // no body at all
  return out;
}

bool SameMessage(const Message& a, const Message& b) {
  return a.SerializeAsString() == b.SerializeAsString();
}

// Builds an envelope around arbitrary body bytes with a correct tag.
Bytes SealRawBody(const ClusterKey& key, std::string_view sender, uint64_t counter,
                  const Bytes& body) {
  Bytes out(kEnvelopeMagic, kEnvelopeMagic + 4);
  out.push_back(static_cast<uint8_t>(sender.size()));
  out.insert(out.end(), sender.begin(), sender.end());
  for (int i = 7; i >= 0; --i) out.push_back(static_cast<uint8_t>(counter >> (8 * i)));
  for (int i = 3; i >= 0; --i) out.push_back(static_cast<uint8_t>(body.size() >> (8 * i)));
  out.insert(out.end(), body.begin(), body.end());
  HmacSha256 mac(key);
  const auto tag = mac.Compute(out);
  out.insert(out.end(), tag.begin(), tag.end());
  return out;
}

TEST(EnvelopeTest, DocumentedVectorMatchesTheCode) {
  const auto vectors = testing::ProtocolDocVectors();
  ASSERT_EQ(vectors.count("envelope-heartbeat"), 1u);
  const Bytes& doc = vectors.at("envelope-heartbeat");
  const ClusterKey key = SequentialKey();
  const Bytes sealed = Seal(key, "rs1", 0x0001020304050607, SampleHeartbeat());
  EXPECT_EQ(Hex(sealed), Hex(doc));
  auto opened = Open(key, doc);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  EXPECT_EQ(opened->sender, "rs1");
  EXPECT_EQ(opened->counter, 0x0001020304050607u);
  ASSERT_EQ(opened->message.body_case(), Message::kHeartbeat);
  EXPECT_EQ(opened->message.heartbeat().flags(), uint32_t{Heartbeat::FLAG_FULL});
  // The tag was cross-checked once against Python's hmac module; pin it here too.
  EXPECT_EQ(Hex(std::span(doc).last(32)),
            "38b4f0e1dd3fcc3be7a29f155ce49881375faeafb2106d8f0751039c41a5ffca");
}

TEST(EnvelopeTest, RoundTripEveryKindSenderLengthAndCounter) {
  const ClusterKey key = SequentialKey();
  EnvelopeCodec codec(key);
  Random rng(1);
  const uint64_t counters[] = {0, 1, 1'700'000'000'000'000, UINT64_MAX};
  for (const Message& m : AllKinds()) {
    for (size_t sender_len = 1; sender_len <= kMaxSenderBytes; ++sender_len) {
      std::string sender(sender_len, '\0');
      for (auto& c : sender) c = static_cast<char>(rng.Next());  // any bytes are allowed
      const uint64_t counter = counters[sender_len % 4];
      const Bytes sealed = codec.Seal(sender, counter, m);
      EXPECT_EQ(sealed.size(), kEnvelopeFixedBytes + sender_len + m.ByteSizeLong());
      auto opened = codec.Open(sealed);
      ASSERT_TRUE(opened.ok()) << opened.status().ToString();
      EXPECT_EQ(opened->sender, sender);
      EXPECT_EQ(opened->counter, counter);
      EXPECT_TRUE(SameMessage(opened->message, m));
      EXPECT_EQ(opened->message.body_case(), m.body_case());
    }
  }
}

TEST(EnvelopeTest, OneShotFormsMatchTheCodec) {
  const ClusterKey key = SequentialKey();
  EnvelopeCodec codec(key);
  const Message m = SampleHeartbeat();
  const Bytes a = Seal(key, "rs1", 42, m);
  EXPECT_EQ(a, codec.Seal("rs1", 42, m));
  auto opened = Open(key, a);
  ASSERT_TRUE(opened.ok());
  EXPECT_EQ(opened->counter, 42u);
}

TEST(EnvelopeTest, EverySingleBitFlipIsRejected) {
  const ClusterKey key = SequentialKey();
  EnvelopeCodec codec(key);
  for (const Message& m : AllKinds()) {
    const Bytes sealed = codec.Seal("rs-17", 1'700'000'000'000'000, m);
    for (size_t bit = 0; bit < sealed.size() * 8; ++bit) {
      Bytes bad = sealed;
      bad[bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
      auto opened = codec.Open(bad);
      ASSERT_FALSE(opened.ok()) << "bit " << bit;
      const Code code = opened.status().code();
      EXPECT_TRUE(code == Code::kInvalidArgument || code == Code::kUnauthenticated)
          << "bit " << bit << ": " << opened.status().ToString();
      // Flips past the header and lengths can only be caught by the tag.
      const size_t body_start = 4 + 1 + 5 + 8 + 4;
      if (bit / 8 >= body_start) {
        EXPECT_EQ(code, Code::kUnauthenticated) << "bit " << bit;
      }
    }
  }
}

TEST(EnvelopeTest, WrongKeyIsUnauthenticated) {
  const Bytes sealed = Seal(SequentialKey(), "rs1", 9, SampleHeartbeat());
  for (int i = 0; i < 20; ++i) {
    auto other = ClusterKey::Generate();
    ASSERT_TRUE(other.ok());
    auto opened = Open(*other, sealed);
    ASSERT_FALSE(opened.ok());
    EXPECT_EQ(opened.status().code(), Code::kUnauthenticated);
    EXPECT_NE(opened.status().message().find("cluster key"), std::string::npos);
  }
}

TEST(EnvelopeTest, TruncatedOrExtendedAtEveryLengthIsMalformed) {
  EnvelopeCodec codec(SequentialKey());
  for (const Message& m : AllKinds()) {
    const Bytes sealed = codec.Seal("rs1", 5, m);
    for (size_t len = 0; len < sealed.size(); ++len) {
      // A heap copy of exactly len bytes, so a read past the end is seen by ASan.
      Bytes cut(sealed.begin(), sealed.begin() + static_cast<ptrdiff_t>(len));
      cut.shrink_to_fit();
      auto opened = codec.Open(cut);
      ASSERT_FALSE(opened.ok()) << "length " << len;
      EXPECT_EQ(opened.status().code(), Code::kInvalidArgument) << "length " << len;
    }
    Bytes longer = sealed;
    longer.push_back(0);
    auto opened = codec.Open(longer);
    ASSERT_FALSE(opened.ok());
    EXPECT_EQ(opened.status().code(), Code::kInvalidArgument);
  }
}

TEST(EnvelopeTest, MalformedHeadersNameTheProblem) {
  EnvelopeCodec codec(SequentialKey());
  Bytes sealed = codec.Seal("rs1", 5, SampleHeartbeat());
  Bytes bad_magic = sealed;
  bad_magic[3] = '2';
  EXPECT_NE(codec.Open(bad_magic).status().message().find("magic"), std::string::npos);
  Bytes zero_sender = sealed;
  zero_sender[4] = 0;
  EXPECT_EQ(codec.Open(zero_sender).status().code(), Code::kInvalidArgument);
  Bytes long_sender = sealed;
  long_sender[4] = 65;
  EXPECT_NE(codec.Open(long_sender).status().message().find("sender length 65"), std::string::npos);
  // Body length over kMaxBodyBytes is refused from the header, without looking further.
  Bytes huge_body = sealed;
  const size_t body_len_at = 4 + 1 + 3 + 8;
  const uint32_t over = static_cast<uint32_t>(kMaxBodyBytes + 1);
  for (int i = 0; i < 4; ++i)
    huge_body[body_len_at + i] = static_cast<uint8_t>(over >> (24 - 8 * i));
  EXPECT_NE(codec.Open(huge_body).status().message().find("over the limit"), std::string::npos);
}

TEST(EnvelopeTest, AuthenticBodyThatDoesNotParseIsDataLoss) {
  const ClusterKey key = SequentialKey();
  // Field 1 (register), length-delimited, announcing 10 bytes that are not there.
  const Bytes body = {0x0a, 0x0a, 0x01};
  auto opened = Open(key, SealRawBody(key, "rs1", 3, body));
  ASSERT_FALSE(opened.ok());
  EXPECT_EQ(opened.status().code(), Code::kDataLoss);
  EXPECT_NE(opened.status().message().find("rs1"), std::string::npos);
  // Heartbeat whose id is not UTF-8: proto3 refuses it, without writing to stderr.
  const Bytes bad_text = {0x1a, 0x03, 0x0a, 0x01, 0xff};
  ::testing::internal::CaptureStderr();
  auto not_utf8 = Open(key, SealRawBody(key, "rs1", 4, bad_text));
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
  EXPECT_EQ(not_utf8.status().code(), Code::kDataLoss);
  // Same bytes under the wrong key: the tag is checked first.
  auto wrong = Open(ClusterKey::Generate().value(), SealRawBody(key, "rs1", 3, body));
  EXPECT_EQ(wrong.status().code(), Code::kUnauthenticated);
}

TEST(EnvelopeTest, AuthenticBodyFromANewerPeerHasNoKnownBody) {
  const ClusterKey key = SequentialKey();
  // Field 100 (a message a future version may add; 10-16 are taken by replication), length 1,
  // one byte of content. Tag = (100 << 3) | 2 = 802 = varint a2 06.
  const Bytes body = {0xa2, 0x06, 0x01, 0x08};
  auto opened = Open(key, SealRawBody(key, "dir", 3, body));
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  EXPECT_EQ(opened->message.body_case(), Message::BODY_NOT_SET);
}

TEST(EnvelopeTest, SizeLimits) {
  EnvelopeCodec codec(SequentialKey());
  const Message m = SampleHeartbeat();
  auto empty_sender = codec.TrySeal("", 1, m);
  ASSERT_FALSE(empty_sender.ok());
  EXPECT_EQ(empty_sender.status().code(), Code::kInvalidArgument);
  auto long_sender = codec.TrySeal(std::string(kMaxSenderBytes + 1, 'x'), 1, m);
  ASSERT_FALSE(long_sender.ok());
  EXPECT_EQ(long_sender.status().code(), Code::kInvalidArgument);

  // A body of exactly kMaxBodyBytes (8 MiB) is allowed; one byte more is not.
  Message big;
  size_t digest_len = kMaxBodyBytes - 16;
  big.mutable_register_()->set_digest(std::string(digest_len, 'd'));
  while (big.ByteSizeLong() < kMaxBodyBytes) {
    big.mutable_register_()->set_digest(std::string(++digest_len, 'd'));
  }
  ASSERT_EQ(big.ByteSizeLong(), kMaxBodyBytes);
  auto sealed = codec.TrySeal("rs1", 1, big);
  ASSERT_TRUE(sealed.ok()) << sealed.status().ToString();
  EXPECT_EQ(sealed->size(), kEnvelopeFixedBytes + 3 + kMaxBodyBytes);
  auto opened = codec.Open(*sealed);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  EXPECT_EQ(opened->message.register_().digest().size(), digest_len);

  big.mutable_register_()->set_digest(std::string(digest_len + 1, 'd'));
  auto too_big = codec.TrySeal("rs1", 1, big);
  ASSERT_FALSE(too_big.ok());
  EXPECT_EQ(too_big.status().code(), Code::kInvalidArgument);
  EXPECT_LE(kEnvelopeFixedBytes + kMaxSenderBytes + kMaxBodyBytes, kMaxEnvelopeBytes);
}

TEST(EnvelopeDeathTest, SealWithAnOversizedSenderAborts) {
  EnvelopeCodec codec(SequentialKey());
  EXPECT_DEATH(codec.Seal(std::string(kMaxSenderBytes + 1, 'x'), 1, SampleHeartbeat()),
               "sender id must be 1 to 64 bytes");
}

TEST(EnvelopeTest, ReplayGuardAfterOpenDropsReplaysButNotReordering) {
  const ClusterKey key = SequentialKey();
  EnvelopeCodec codec(key);
  CounterSource counters(1'700'000'000'000'000);
  std::vector<Bytes> sent;
  for (int i = 0; i < 10; ++i)
    sent.push_back(codec.Seal("rs1", counters.Next(), SampleHeartbeat()));
  ReplayGuard guard;
  int delivered = 0;
  // Deliver in reverse (reordered), then everything again (replayed).
  for (int pass = 0; pass < 2; ++pass) {
    for (auto it = sent.rbegin(); it != sent.rend(); ++it) {
      auto opened = codec.Open(*it);
      ASSERT_TRUE(opened.ok());
      if (guard.Accept(opened->sender, opened->counter).ok()) ++delivered;
    }
  }
  EXPECT_EQ(delivered, 10);
}

}  // namespace
}  // namespace vsc::proto

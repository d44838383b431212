#include "relay/peer_auth.h"

#include <gtest/gtest.h>

#include "unit/relay/peer_frames.h"

namespace vsc::relay {
namespace {

using testing::Copy;
using testing::Key;

TEST(PeerAuthTest, SealedFramesOpenInOrderAndTheTagIsStripped) {
  const proto::Nonce nonce = proto::NewNonce();
  PeerSealer sealer(Key(1), nonce);
  PeerOpener opener(Key(1), nonce);
  for (uint64_t i = 0; i < 5; ++i) {
    Frame f = Copy(i);
    sealer.Seal(f);
    EXPECT_EQ(f.payload.size(), 4 + kTagBytes);
    ASSERT_TRUE(opener.Open(f).ok()) << i;
    EXPECT_EQ(f, Copy(i));
  }
}

TEST(PeerAuthTest, EncodeSendsTheSealedFrameEncoded) {
  const proto::Nonce nonce = proto::NewNonce();
  PeerSealer encoder(Key(1), nonce), sealer(Key(1), nonce);
  PeerOpener opener(Key(1), nonce);
  for (uint64_t i = 0; i < 5; ++i) {
    Frame f = Copy(i);
    f.payload.assign(i * 300, static_cast<uint8_t>(i));  // a buffer that grows and shrinks
    const std::span<const uint8_t> wire = encoder.Encode(f);
    Frame sealed = f;
    sealer.Seal(sealed);
    EXPECT_EQ(std::vector<uint8_t>(wire.begin(), wire.end()), EncodeFrame(sealed)) << i;
    FrameDecoder decoder;
    decoder.Feed(wire);
    auto next = decoder.Next();
    ASSERT_TRUE(next.ok() && next->has_value()) << i;
    ASSERT_TRUE(opener.Open(**next).ok()) << i;
    EXPECT_EQ(**next, f);
  }
}

TEST(PeerAuthTest, WrongKeyAlteredReplayedReorderedOrForeignFramesFail) {
  const proto::Nonce nonce = proto::NewNonce();
  auto sealed = [&](PeerSealer& s, uint64_t seq) {
    Frame f = Copy(seq);
    s.Seal(f);
    return f;
  };
  {
    PeerSealer s(Key(1), nonce);
    PeerOpener o(Key(2), nonce);
    Frame f = sealed(s, 1);
    EXPECT_EQ(o.Open(f).code(), Code::kUnauthenticated);
  }
  {
    PeerSealer s(Key(1), nonce);
    PeerOpener o(Key(1), nonce);
    Frame f = sealed(s, 1);
    f.seq = 2;  // altered
    EXPECT_FALSE(o.Open(f).ok());
  }
  {
    PeerSealer s(Key(1), nonce);
    PeerOpener o(Key(1), nonce);
    Frame first = sealed(s, 1);
    Frame replay = first;
    ASSERT_TRUE(o.Open(first).ok());
    EXPECT_FALSE(o.Open(replay).ok());  // frame number 1 expected, the tag is for 0
  }
  {
    PeerSealer s(Key(1), nonce);
    PeerOpener o(Key(1), nonce);
    Frame a = sealed(s, 1);
    Frame b = sealed(s, 2);
    EXPECT_FALSE(o.Open(b).ok());  // reordered
  }
  {
    PeerSealer s(Key(1), proto::NewNonce());  // another connection's nonce
    PeerOpener o(Key(1), nonce);
    Frame f = sealed(s, 1);
    EXPECT_FALSE(o.Open(f).ok());
  }
  {
    PeerOpener o(Key(1), nonce);
    Frame f = Copy(1);  // no tag at all
    EXPECT_EQ(o.Open(f).message(), "peer frame without its 32-byte tag");
  }
}

TEST(PeerAuthTest, NonceOfTakesExactlySixteenBytes) {
  Frame f;
  f.payload.resize(16, 7);
  ASSERT_TRUE(NonceOf(f).ok());
  f.payload.resize(15);
  EXPECT_FALSE(NonceOf(f).ok());
}

}  // namespace
}  // namespace vsc::relay

#include "proto/session_frames.h"

#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "doc_vectors.h"
#include "proto/frame.h"

namespace vsc::proto {
namespace {

using Bytes = std::vector<uint8_t>;

// The payload of a framed message (the decoder is the one the sessions use).
Bytes Unframe(const Bytes& framed) {
  FrameDecoder dec;
  dec.Feed(framed);
  auto next = dec.Next();
  EXPECT_TRUE(next.ok() && next->has_value());
  return next.ok() && next->has_value() ? **next : Bytes{};
}

Nonce CountingNonce() {
  Nonce n;
  for (size_t i = 0; i < n.size(); ++i) n[i] = static_cast<uint8_t>(i);
  return n;
}

TEST(SessionFramesTest, DocumentedChallengeVectorMatchesTheCode) {
  const auto vectors = testing::ProtocolDocVectors();
  ASSERT_EQ(vectors.count("challenge-frame"), 1u);
  const Bytes& doc = vectors.at("challenge-frame");
  EXPECT_EQ(ChallengeFrame(CountingNonce()), doc);
  auto parsed = ParseChallenge(Unframe(doc));
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(*parsed, CountingNonce());
}

TEST(SessionFramesTest, DocumentedAuthFailedVectorMatchesTheCode) {
  const auto vectors = testing::ProtocolDocVectors();
  ASSERT_EQ(vectors.count("auth-failed-frame"), 1u);
  const Bytes& doc = vectors.at("auth-failed-frame");
  EXPECT_EQ(AuthFailedFrame(), doc);
  EXPECT_TRUE(IsAuthFailed(Unframe(doc)));
}

TEST(SessionFramesTest, NothingElseIsTakenForAChallengeOrAnAuthFailure) {
  const Bytes challenge = Unframe(ChallengeFrame(CountingNonce()));
  const Bytes failed = Unframe(AuthFailedFrame());
  EXPECT_FALSE(IsAuthFailed(challenge));
  EXPECT_FALSE(ParseChallenge(failed).ok());
  Bytes longer = failed;
  longer.push_back(0);
  EXPECT_FALSE(IsAuthFailed(longer));
  Bytes short_challenge(challenge.begin(), challenge.end() - 1);
  EXPECT_FALSE(ParseChallenge(short_challenge).ok());
  Bytes envelope_magic = challenge;
  envelope_magic[2] = 'E';
  envelope_magic[3] = '1';  // "VSE1": an envelope, not a challenge
  auto refused = ParseChallenge(envelope_magic);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("challenge"), std::string::npos);
}

TEST(SessionFramesTest, NoncesDoNotRepeat) {
  std::set<Nonce> seen;
  for (int i = 0; i < 1000; ++i) EXPECT_TRUE(seen.insert(NewNonce()).second);
}

}  // namespace
}  // namespace vsc::proto

#include "replication/sequencer.h"

#include <gtest/gtest.h>

#include "common/random.h"

namespace vsc::replication {
namespace {

TEST(SequencerTest, SeqAndTimestampStrictlyIncreaseWhateverTheWallClockDoes) {
  Random rng(7);
  Sequencer seq(3, 0, 0);
  int64_t wall = 1'700'000'000'000'000;
  uint64_t last_seq = 0;
  int64_t last_ts = 0;
  int went_back = 0;
  for (int i = 0; i < 10'000; ++i) {
    // Mostly forward, sometimes a big step back (NTP), sometimes standing still.
    const uint64_t move = rng.Uniform(10);
    if (move == 0) {
      wall -= static_cast<int64_t>(rng.Uniform(5'000'000));
      ++went_back;
    } else if (move > 1) {
      wall += static_cast<int64_t>(rng.Uniform(1000));
    }
    Entry e = seq.Assign({Statement{"INSERT INTO t VALUES(1)", {}}}, Entry::Kind::kWrite, wall);
    EXPECT_EQ(e.epoch, 3u);
    EXPECT_EQ(e.seq, last_seq + 1);
    EXPECT_GT(e.ts_micros, last_ts);
    EXPECT_GE(e.ts_micros, wall);  // never behind the wall clock
    last_seq = e.seq;
    last_ts = e.ts_micros;
  }
  EXPECT_GT(went_back, 100);
  EXPECT_EQ(seq.last_seq(), 10'000u);
  EXPECT_EQ(seq.last_ts_micros(), last_ts);
}

TEST(SequencerTest, ResumesAfterTheLoggedPosition) {
  Sequencer seq(9, 41, 5'000);
  Entry e = seq.Assign({}, Entry::Kind::kChecksum, 1'000);  // wall clock behind the log
  EXPECT_EQ(e.seq, 42u);
  EXPECT_EQ(e.epoch, 9u);
  EXPECT_EQ(e.ts_micros, 5'001);
  EXPECT_EQ(e.kind, Entry::Kind::kChecksum);
  Entry f = seq.Assign({}, Entry::Kind::kWrite, 9'000);
  EXPECT_EQ(f.seq, 43u);
  EXPECT_EQ(f.ts_micros, 9'000);
}

}  // namespace
}  // namespace vsc::replication

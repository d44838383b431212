// Idempotency keys for replicated writes (issue 11): a writer may name a write with a key, so
// that a retry of a write whose outcome it never learnt (the director stopped, lost its lease)
// is safe: a replica that applied the key within the window applies nothing and reports the
// original outcome (idempotency_table.h). Pure.
#pragma once

#include <cstdint>
#include <string_view>

#include "common/status.h"

namespace vsc::replication {

inline constexpr size_t kMaxIdempotencyKeyBytes = 128;
// How many seqs a key is remembered by default: a retry sequenced more than this many writes
// after its original is applied again. 1,000,000 seqs is the log's default retention, so a
// retry that could still be caught up from the log is always recognised.
inline constexpr uint64_t kDefaultIdempotencyWindow = 1'000'000;

// OK for a usable key: non-empty, at most kMaxIdempotencyKeyBytes, printable ASCII (0x20-0x7e).
// InvalidArgument saying what is wrong and what to send otherwise.
Status ValidateIdempotencyKey(std::string_view key);

// Whether a key recorded at `recorded_seq` still counts for an entry at `seq` under `window`:
// recorded_seq > seq - window (every key counts while seq <= window).
bool WithinWindow(uint64_t recorded_seq, uint64_t seq, uint64_t window);
// The oldest seq whose keys an entry at `seq` under `window` still remembers (0: all).
uint64_t OldestRemembered(uint64_t seq, uint64_t window);

}  // namespace vsc::replication

// The replica VFS: SQLite's default VFS with a pinned clock (DESIGN §7 "Determinism by
// construction"). Registered once per process under kReplicaVfsName; every method forwards to the
// default VFS, except xCurrentTime/xCurrentTimeInt64, which return the timestamp pinned by a
// ClockPin on the calling thread (the entry being applied), so 'now', CURRENT_TIMESTAMP,
// CURRENT_DATE and column defaults evaluate identically on every replica. Without a pin the real
// clock is used. The pin is thread_local because SQLite passes the VFS, not the connection, to the
// clock methods; one writer thread applies one entry at a time, so that is exact.
#pragma once

#include <cstdint>

namespace vsc::replication {

inline constexpr const char* kReplicaVfsName = "vsc-replica";

// Registers the VFS (idempotent, thread safe). Returns the SQLite result code.
int RegisterReplicaVfs();

// While alive, SQLite's clock on this thread's replica-VFS connections reads `ts_micros`
// (rounded down to the millisecond, SQLite's clock resolution). Not nestable.
class ClockPin {
 public:
  explicit ClockPin(int64_t ts_micros);
  ~ClockPin();
  ClockPin(const ClockPin&) = delete;
  ClockPin& operator=(const ClockPin&) = delete;
};

// The Julian-day milliseconds SQLite's clock reports for a Unix time in microseconds.
int64_t JulianDayMillis(int64_t unix_micros);

}  // namespace vsc::replication

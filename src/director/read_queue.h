// The SQL read path's pure parts (DESIGN §7 "Read-your-writes", seed 001's request queue):
// - PickReplica: the least-loaded eligible replica that has applied the client's min_seq;
// - ReadQueue: the director's bounded request queue, holding reads that no replica can serve
//   yet (none eligible, or none has applied min_seq) until one can or their deadline passes.
//   A full queue refuses with "overloaded: request queue full (N)": never a silent drop.
// No I/O, no clock reads: deadlines are computed by the caller from its Clock. One owner.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "net/endpoint.h"
#include "proto/control.pb.h"

namespace vsc::director {

struct ReadCandidate {
  std::string id;
  net::SockAddr sql;       // the replica's "sql-udp" endpoint, IPv4 or IPv6
  net::SockAddr sql_tcp;   // its "sql-tcp" endpoint (port 0: it offers none)
  bool eligible = false;   // ACTIVE, in sync with the stream, window not full
  uint64_t applied_seq = 0;
  double load = 0;         // lower is better: reads sent recently plus reported in-flight work
};

// Index of the eligible candidate with applied_seq >= min_seq and the lowest load (ties: the
// lowest index, so the result is deterministic), or nullopt.
std::optional<size_t> PickReplica(std::span<const ReadCandidate> candidates, uint64_t min_seq);

// What the director answers itself to a read it cannot serve (queue full, timeout, no replica):
// ReadResponse{ok=false, error, replica_id "director"}, to be sealed by "director".
proto::Message DirectorReadRefusal(uint64_t request_id, const std::string& error);

struct QueuedRead {
  std::vector<uint8_t> datagram;  // the client's envelope, forwarded unchanged
  net::SockAddr client;  // as the read port's socket received it (IPv4-mapped on a dual stack)
  uint64_t request_id = 0;
  uint64_t min_seq = 0;
  TimePoint deadline{};
};

class ReadQueue {
 public:
  explicit ReadQueue(size_t capacity) : capacity_(capacity) {}

  // Holds a read. ResourceExhausted "overloaded: request queue full (N)" when full.
  Status Push(QueuedRead read);
  // Offers every held read, oldest first, to `route`, which returns true when it forwarded the
  // read; those leave the queue. Returns how many left.
  size_t Drain(const std::function<bool(const QueuedRead&)>& route);
  // Removes and returns the reads whose deadline is at or before `now`, oldest first.
  std::vector<QueuedRead> Expire(TimePoint now);
  // The earliest deadline held, nullopt when empty.
  std::optional<TimePoint> next_deadline() const;

  size_t size() const { return reads_.size(); }
  size_t capacity() const { return capacity_; }
  bool empty() const { return reads_.empty(); }

 private:
  size_t capacity_;
  std::deque<QueuedRead> reads_;  // arrival order
};

}  // namespace vsc::director

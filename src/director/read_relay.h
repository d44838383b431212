// ReadRelay: SELECTs of any size for native clients (`vsc sql`) over the director's TCP write
// port. A ReadRequest that arrives on a write session is forwarded, its envelope unchanged, to
// the TCP read path ("sql-tcp") of a replica chosen as the SQL read port chooses (PickReplica:
// ACTIVE, in sync, applied min_seq, least loaded); the replica's pages (sealed ReadResponses,
// `more` on all but the last) are copied to the client as they arrive. The relay stops reading
// the replica while the client's outbox holds more than `max_queued_bytes`, so a slow client
// holds the director to about one page, not the whole result.
//
// A replica that cannot answer before its first page (unreachable, "not yet applied", installing
// a snapshot, silent for `page_timeout`) is skipped for another, waiting for replication
// progress up to `timeout`; one that fails after pages went out ends the answer with an error
// page saying the rows are incomplete.
// No eligible replica within `timeout`: one error page naming why.
//
// Thread: the control thread (the Replicator's). Lifetime: owned by the Director, outlives the
// write server's sessions.
#pragma once

#include <asio.hpp>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/counter.h"
#include "director/outbox.h"
#include "director/replicator.h"
#include "proto/envelope.h"

namespace vsc::director {

struct ReadRelayOptions {
  Duration timeout = std::chrono::seconds(2);  // for a replica to take the read
  // For each page once a replica took it: a replica builds its pages before it sends the first,
  // so a large result's first page takes as long as its whole query.
  Duration page_timeout = std::chrono::seconds(30);
  size_t max_queued_bytes = size_t{1} << 20;  // client backlog at which the relay pauses
};

struct ReadRelayCounters {
  Counter relayed;  // reads answered by a replica (ok or its SQL error)
  Counter pages;    // pages copied to clients
  Counter failed;   // answered by the relay itself (no replica, or one failed midway)
};

class ReadRelay {
 public:
  ReadRelay(asio::io_context& io, const proto::ClusterKey& key, const Clock& clock,
            Replicator& replicator, ReadRelayOptions options);

  // Relays one read: `envelope` is the client's sealed request (forwarded as is), `request` its
  // opened content. Every answer frame goes to `out`.
  static asio::awaitable<void> Relay(ReadRelay* self, std::vector<uint8_t> envelope,
                                     proto::ReadRequest request, std::shared_ptr<Outbox> out);

  const ReadRelayCounters& counters() const { return counters_; }

 private:
  enum class Attempt { kDone, kSkip };
  struct AttemptResult {
    Attempt next = Attempt::kDone;
    std::string error;  // kSkip: why this replica could not answer
  };
  asio::awaitable<AttemptResult> TryReplica(const ReadCandidate& c,
                                            std::span<const uint8_t> envelope, uint64_t request_id,
                                            const std::shared_ptr<Outbox>& out);
  // Seals and queues ReadResponse{ok=false, error}.
  void AnswerError(Outbox& out, uint64_t request_id, const std::string& error);

  asio::io_context& io_;
  proto::EnvelopeCodec codec_;
  proto::CounterSource counter_;
  const Clock& clock_;
  Replicator& replicator_;
  ReadRelayOptions options_;
  ReadRelayCounters counters_;
};

}  // namespace vsc::director

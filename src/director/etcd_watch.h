// WaitForDelete: a blocking etcd watch on one key (POST /v3/watch on the v3 JSON gateway, whose
// answer is a chunked stream of JSON messages, one per line), for a standby director that waits
// for the sequencer key of the director holding it to go (issue 11): when that director dies,
// etcd deletes the key as its lease expires, and the standby claims it at once instead of at its
// next periodic claim (up to TTL / 3 later).
//
// The watch starts at `start_revision` (the holder's key's mod_revision + 1, so a delete that
// happened since the caller last looked is reported at once) and ends at the first DELETE of
// the key, at `deadline`, or when `wake_fd` becomes readable (the caller's stop). An etcd that
// cannot be reached, refuses or ends the watch (compaction) is an error: the caller falls back
// to waiting for its periodic claim.
//
// Thread: blocking, any thread (LeaseKeeper's). One connection per call, closed at return.
#pragma once

#include <cstdint>
#include <string_view>

#include "common/clock.h"
#include "common/status.h"
#include "director/etcd_client.h"

namespace vsc::director {

enum class WatchEnd { kDeleted, kDeadline, kWoken };

Result<WatchEnd> WaitForDelete(const EtcdEndpoint& endpoint, std::string_view key,
                               int64_t start_revision, TimePoint deadline, const Clock& clock,
                               int wake_fd);

}  // namespace vsc::director

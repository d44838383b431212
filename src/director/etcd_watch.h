// WatchKey: a blocking etcd watch on one key (POST /v3/watch on the v3 JSON gateway, whose
// answer is a chunked stream of JSON messages, one per line). Two users (issue 11):
// - a standby director waits for the sequencer key of the director holding it to go
//   (WatchFor::kDelete): when that director dies, etcd deletes the key as its lease expires,
//   and the standby claims it at once instead of at its next periodic claim (up to TTL / 3
//   later);
// - every director waits for the service table's key to change (WatchFor::kAnyChange), and
//   reads it then instead of polling it.
//
// The watch goes to the client's preferred endpoint (the one that answered last), starts at
// `start_revision` (the key's mod_revision as last read + 1, so an event since the caller last
// looked is reported at once) and ends at the first event of the kind asked for, at `deadline`,
// or when `wake_fd` becomes readable (the caller's stop; required, so that a stop never waits
// for the deadline). An etcd that cannot be reached, refuses or ends the watch (compaction),
// and a missing endpoint or wake descriptor, are errors: the caller then falls back to what it
// did without a watch (the periodic claim, the table's poll).
//
// Thread: blocking, any thread (LeaseKeeper's, ServiceTableWatch's). One connection per call,
// closed at return.
#pragma once

#include <cstdint>
#include <string_view>

#include "common/clock.h"
#include "common/status.h"
#include "director/etcd_client.h"

namespace vsc::director {

enum class WatchFor { kDelete, kAnyChange };
enum class WatchEnd { kEvent, kDeadline, kWoken };

Result<WatchEnd> WatchKey(const EtcdClient& client, std::string_view key, int64_t start_revision,
                          WatchFor what, TimePoint deadline, const Clock& clock, int wake_fd);

}  // namespace vsc::director

// FakeReplica: a real server as the director's Replicator sees it, for replicator tests and the
// director fuzz targets. Its FakeLink records what the director sends on the control session;
// Apply() "applies" every Replicate received (every write changes `rows` rows, checksum markers
// report `checksum`) and returns the ack a correct replica would send, with digests that follow
// the real chain (replication/digest.h). No SQLite, no I/O. Thread: the caller's only.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "director/replicator.h"
#include "proto/control.pb.h"
#include "replication/digest.h"
#include "replication/entry.h"

namespace vsc::testing {

class FakeLink final : public director::ReplicaLink {
 public:
  void Send(const proto::Message& m) override { sent.push_back(m); }
  // Decoded as the real server's agent decodes it; bytes that are not a Message abort (a
  // director bug no test may pass over).
  void SendEncoded(std::string_view message) override;
  std::vector<proto::Message> Take();
  std::vector<proto::Message> sent;
};

struct FakeReplica {
  std::string id;
  uint64_t incarnation = 1;
  uint64_t applied = 0;
  replication::Digest digest = replication::ZeroDigest();
  std::string content_checksum;
  int64_t rows = 1;
  std::string checksum = "c0ffee";
  std::shared_ptr<FakeLink> link = std::make_shared<FakeLink>();
  uint64_t hb_counter = 0;
  uint64_t session = 0;  // the control session it registers on (one per replica here)
  // Idempotency keys applied (key -> seq): a keyed entry seen again applies nothing and reports
  // duplicate_of, as the SqliteExecutor does (no window: tests stay well inside it).
  std::map<std::string, uint64_t> keys;
  uint64_t gaps = 0;             // entries received that did not follow `applied` (a director bug)
  uint16_t sql_udp_port = 9001;  // where the director forwards reads (a test's socket)
  std::string host = "127.0.0.1";   // the address its endpoints name ("::1": an IPv6 replica)
  std::vector<std::string> schema;  // sent in its Register (a promoting director adopts it)

  // Registers with the endpoints lookup-udp 9000, sql-udp `sql_udp_port`, http 9002 on
  // `host` and the capability "sql", at its current applied seq and digest.
  proto::Register Register() const;
  proto::Heartbeat Heartbeat();
  // Applies every Replicate received so far; the ack, or nullopt when nothing new came.
  std::optional<proto::ReplicaAck> Apply();
  size_t EntriesQueued() const;
  std::optional<proto::InstallSnapshot> SnapshotOrder() const;
};

// Writes a bootstrap database at `path`: table t(id INTEGER PRIMARY KEY, v TEXT) holding
// (1, 'one'). Aborts when SQLite fails (a broken test environment).
void MakeBootstrap(const std::string& path);

}  // namespace vsc::testing

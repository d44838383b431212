// StateSync: the director's state sync daemon (issue 11; LVS's ipvsadm --start-daemon), run on
// the control thread. Every `interval` it takes what the workers noted (SyncOutbox), packs it
// into SyncBatch messages (sync_codec.h) and sends each, sealed with the cluster key, to every
// peer's sync port; what the peers send it opens, checks against replay, decodes and hands to
// `apply` (ServiceEngine::AdoptSynced).
//
// Every director with peers both sends and receives (LVS's master and backup at once): only
// the one the VIP leads to records anything, so there is no role to switch at failover, and a
// failed-back director learns what its successor recorded. Records received are not sent on.
//
// Bad input is dropped and counted: a datagram that is not an envelope, fails the tag, replays
// a counter, or is not a SyncBatch; a record that does not decode; a record for a service or a
// destination this director does not run (ignored).
#pragma once

#include <array>
#include <asio/io_context.hpp>
#include <asio/ip/udp.hpp>
#include <asio/steady_timer.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "director/sync_outbox.h"
#include "proto/auth.h"
#include "proto/cluster_key.h"
#include "proto/envelope.h"

namespace vsc::director {

struct StateSyncOptions {
  std::string listen = "127.0.0.1";
  uint16_t port = 0;               // 0: any free port (tests)
  std::vector<std::string> peers;  // "host:port" of each peer's sync port
  Duration interval = std::chrono::milliseconds(20);
};

struct StateSyncCounters {
  uint64_t sent_records = 0;
  uint64_t sent_datagrams = 0;
  uint64_t sent_bytes = 0;
  uint64_t send_errors = 0;
  uint64_t received_records = 0;  // decoded and adopted
  uint64_t received_datagrams = 0;
  uint64_t received_bytes = 0;
  uint64_t ignored_records = 0;    // a service or destination this director does not run
  uint64_t malformed_records = 0;  // did not decode
  uint64_t refused_datagrams = 0;  // not an envelope, bad tag, replayed, not a SyncBatch
};

// Owned through a shared_ptr: pending handlers hold it, so Stop() may come before they run.
class StateSync : public std::enable_shared_from_this<StateSync> {
 public:
  using Apply = std::function<bool(const SyncRecord&)>;

  StateSync(asio::io_context& io, const proto::ClusterKey& key, StateSyncOptions options,
            std::shared_ptr<SyncOutbox> outbox, Apply apply);
  ~StateSync();

  // Resolves the peers and binds listen:port; an error names what failed (nothing runs then).
  Status Start();
  void Stop();

  uint16_t port() const { return port_; }
  // The Prometheus lines of the counters (control thread, like every counter here).
  std::string RenderMetrics() const;
  const StateSyncCounters& counters() const { return counters_; }
  uint64_t outbox_dropped() const { return outbox_->dropped(); }

 private:
  void ArmFlush();
  void Flush();
  void ArmReceive();
  void OnDatagram(size_t n);

  asio::io_context& io_;
  StateSyncOptions options_;
  std::shared_ptr<SyncOutbox> outbox_;
  Apply apply_;
  proto::EnvelopeCodec codec_;
  proto::ReplayGuard replay_{16};
  std::string sender_;
  uint64_t counter_ = 0;
  asio::ip::udp::socket socket_;
  asio::steady_timer flush_timer_;
  std::vector<asio::ip::udp::endpoint> peers_;
  asio::ip::udp::endpoint from_;
  std::array<uint8_t, 65536> buffer_{};
  uint16_t port_ = 0;
  bool stopped_ = false;
  StateSyncCounters counters_;
};

}  // namespace vsc::director

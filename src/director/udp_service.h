// UdpService: the lookup virtual service over UDP on one worker (DESIGN §3, `dr`).
// Receives client requests in recvmmsg batches, picks a real server, prepends the forward header
// naming the client, and sends the batch to the real servers with sendmmsg. The real server
// answers the client directly; the director never sees replies.
// Owned by one worker thread; every method runs on that thread.
#pragma once

#include <asio.hpp>

#include <memory>

#include "common/clock.h"
#include "director/counters.h"
#include "director/service_scheduler.h"
#include "net/udp_batch.h"

namespace vsc::director {

class UdpService {
 public:
  UdpService(asio::io_context& io, const Clock& clock, WorkerCounters& counters,
             sched::SchedulerOptions options)
      : io_(io), clock_(clock), counters_(counters), sched_(kUdpService, options) {}

  // Starts receiving on `socket` (bound with SO_REUSEPORT, one per worker).
  // `decay_period`: how often the recent-request counts used by lc/wlc are halved.
  void Start(std::unique_ptr<net::UdpBatchSocket> socket, Duration decay_period);
  void Stop();
  void OnView(const ViewPtr& view) { sched_.OnView(view); }
  uint16_t local_port() const;

 private:
  void Handle(std::span<net::Datagram> in, net::SendBatch& out);
  void ArmDecay();
  // Datagrams the kernel truncated never reach Handle(); fold the socket's count into the
  // service counters (received, dropped as malformed: no lookup request is that long).
  void SyncTruncated();

  asio::io_context& io_;
  const Clock& clock_;
  WorkerCounters& counters_;
  ServiceScheduler sched_;
  std::unique_ptr<net::UdpBatchSocket> socket_;
  asio::steady_timer decay_timer_{io_};
  Duration decay_period_{};
  uint64_t truncated_seen_ = 0;
};

}  // namespace vsc::director

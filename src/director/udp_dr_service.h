// UdpDrService: the built-in lookup entry `-u VIP:lookup_port` on one worker (DESIGN §3, `dr`).
// Receives client requests in recvmmsg batches, validates each as a lookup request (a real
// server never sees garbage from the director), picks a destination from the current
// ServiceView, prepends the forward header naming the client, and sends the batch to the real
// servers with sendmmsg. The real server answers the client directly; the director never sees
// replies. In dr mode the director never sees a request end: a destination's `active` count is
// the number of recent requests, decayed by the engine (ServiceEngine::DecayDatagramCounts).
//
// Owned through shared_ptr by the engine; every method on the worker's thread.
#pragma once

#include <asio/io_context.hpp>
#include <asio/steady_timer.hpp>
#include <memory>

#include "common/clock.h"
#include "director/dest_picker.h"
#include "director/worker_service.h"
#include "net/udp_batch.h"

namespace vsc::director {

class UdpDrService : public WorkerService, public std::enable_shared_from_this<UdpDrService> {
 public:
  // `socket`: bound (SO_REUSEPORT) on `io`, this worker's context, not started.
  UdpDrService(asio::io_context& io, const Clock& clock, sched::SchedulerOptions sched,
               std::unique_ptr<net::UdpBatchSocket> socket)
      : clock_(clock), picker_(sched), socket_(std::move(socket)), truncated_timer_(io) {}

  void Start() override;
  void Stop() override;
  void OnView(ServiceViewPtr view) override { picker_.OnView(std::move(view)); }

 private:
  void Handle(std::span<net::Datagram> in, net::SendBatch& out);
  // Forwards one valid request to its destination; false when none can take it.
  bool Forward(const ServiceView& view, net::Datagram& d, TimePoint now, net::SendBatch& out);
  // Datagrams the kernel truncated never reach Handle(); they count as received and
  // malformed (no lookup request is that long).
  // Also once a second, so a truncated datagram alone is counted too.
  void SyncTruncated(ServiceStats& svc);
  void ArmTruncatedTimer();

  const Clock& clock_;
  DestPicker picker_;
  std::unique_ptr<net::UdpBatchSocket> socket_;
  uint64_t truncated_seen_ = 0;
  asio::steady_timer truncated_timer_;
};

}  // namespace vsc::director

// TcpService: the lookup virtual service over TCP on one worker, as a connection-level proxy
// (DESIGN §3 `nat` for TCP): accept, pick a real server, connect, pump bytes both ways with
// splice(2). A connection never leaves the worker that accepted it.
// Owned by one worker thread; every method runs on that thread. Must outlive its io_context's
// run (sessions hold a raw pointer to it).
#pragma once

#include <asio.hpp>

#include <memory>

#include "common/clock.h"
#include "director/counters.h"
#include "director/service_scheduler.h"
#include "net/tcp_listener.h"

namespace vsc::director {

class TcpService {
 public:
  TcpService(asio::io_context& io, const Clock& clock, WorkerCounters& counters,
             sched::SchedulerOptions options)
      : io_(io), clock_(clock), counters_(counters), sched_(kTcpService, options) {}

  // Starts accepting on `listener` (bound with SO_REUSEPORT, one per worker).
  void Start(std::unique_ptr<net::TcpListener> listener);
  void Stop();
  void OnView(const ViewPtr& view) { sched_.OnView(view); }
  uint16_t local_port() const;

 private:
  static asio::awaitable<void> Session(TcpService* self, asio::ip::tcp::socket client);

  asio::io_context& io_;
  const Clock& clock_;
  WorkerCounters& counters_;
  ServiceScheduler sched_;
  std::unique_ptr<net::TcpListener> listener_;
};

}  // namespace vsc::director

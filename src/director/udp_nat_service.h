// UdpNatService: one UDP virtual service with `nat` destinations on one worker (DESIGN §3,
// issue 12): each client address:port gets a session (vservice::UdpSessionTable) bound to one
// destination through its own connected upstream socket; the client's datagrams go to that
// destination and its replies are relayed back from the service's address. A session lives
// while datagrams keep arriving less than `session_timeout` apart (ipvsadm --set udp, default
// 300 s), refreshed in both directions. With one-packet scheduling (ipvsadm -o) every datagram
// is scheduled on its own; its upstream socket relays the replies that arrive within
// `ops_reply_window` and is closed. At the table's limit a new client is refused and counted.
// With no usable destination the sorry server takes the datagram; without one it is counted
// as refused. A new view ends the sessions FlowsToEnd names (a removed destination under
// expire_nodest_conn, one marked down with on_marked_down = shutdown-sessions): the client's next
// datagram opens a new session to a usable destination.
//
// SO_REUSEPORT hashes a client's 4-tuple to one worker, so a session never leaves its worker.
// Owned through shared_ptr (coroutines hold it); every method on the worker's thread.
#pragma once

#include <asio.hpp>
#include <map>
#include <memory>

#include "common/clock.h"
#include "director/dest_picker.h"
#include "director/service_view.h"
#include "director/worker_service.h"
#include "net/flow_timeouts.h"
#include "vservice/udp_session_table.h"

namespace vsc::director {

struct UdpNatOptions {
  Duration session_timeout = std::chrono::seconds(300);
  // When given, the session timeout follows its udp value (ipvsadm --set), checked every second.
  std::shared_ptr<const net::FlowTimeouts> timeouts;
  Duration ops_reply_window = std::chrono::seconds(2);
  size_t max_sessions = 65536;
  bool expire_nodest_conn = false;  // flow_expiry.h
};

// A UDP socket bound to `ep` with SO_REUSEPORT, one per worker. kIo naming the endpoint when the
// port is taken.
Result<asio::ip::udp::socket> BindUdp(asio::io_context& io, const asio::ip::udp::endpoint& ep);

class UdpNatService : public WorkerService, public std::enable_shared_from_this<UdpNatService> {
 public:
  UdpNatService(asio::io_context& io, const Clock& clock, sched::SchedulerOptions sched,
                UdpNatOptions options, asio::ip::udp::socket socket);

  void Start() override;
  void Stop() override;
  void OnView(ServiceViewPtr view) override;
  void ListFlows(TimePoint now, std::vector<FlowEntry>& out) const override;

  struct Session;

 private:
  static asio::awaitable<void> ReceiveLoop(std::shared_ptr<UdpNatService> self);
  static asio::awaitable<void> RelayReplies(std::shared_ptr<UdpNatService> self,
                                            std::shared_ptr<Session> session);
  void OnDatagram(const asio::ip::udp::endpoint& from, std::span<const uint8_t> data);
  std::shared_ptr<Session> OpenSession(const asio::ip::udp::endpoint& from,
                                       const vservice::AddrPort& client, bool one_packet);
  void CloseSession(const std::shared_ptr<Session>& s);
  // Closes the sessions to `dest` and forgets them; returns how many.
  size_t EndSessions(const vservice::AddrPort& dest);
  void ArmExpiry();

  asio::io_context& io_;
  const Clock& clock_;
  DestPicker picker_;
  UdpNatOptions options_;
  asio::ip::udp::socket socket_;
  vservice::UdpSessionTable table_;
  std::map<vservice::AddrPort, std::shared_ptr<Session>> sessions_;
  asio::steady_timer expiry_{io_};
  std::vector<uint8_t> buffer_ = std::vector<uint8_t>(65536);
  bool stopped_ = false;
};

}  // namespace vsc::director

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
// Batched (issue 12, benchmark 4): the service socket is read with recvmmsg, up to
// kReceiveBatch datagrams a call; a batch's datagrams are grouped by session (BatchGrouper) and
// each session's leave in one sendmmsg on its upstream socket; a readable upstream socket is
// read with recvmmsg too and its replies go back to the client in one sendmmsg. A short read
// means the queue was empty, so no call is spent on EAGAIN; after kBatchesPerWakeup full
// batches the loop yields to the worker's other handlers. A full send buffer drops the datagram
// (as UDP would) instead of blocking the worker.
//
// Passive check: an ICMP port unreachable for a session's datagram (ECONNREFUSED on its
// connected upstream socket, read or send) ends the session and reports the destination, as a
// failed connect does in TcpNatService; the engine marks it FAILING until its check passes.
//
// SO_REUSEPORT hashes a client's 4-tuple to one worker, so a session never leaves its worker.
// Owned through shared_ptr (handlers hold it); every method on the worker's thread.
#pragma once

#include <asio.hpp>
#include <memory>
#include <unordered_map>

#include "common/clock.h"
#include "director/dest_picker.h"
#include "director/service_view.h"
#include "director/worker_service.h"
#include "net/batch_grouper.h"
#include "net/flow_timeouts.h"
#include "net/mmsg.h"
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
                UdpNatOptions options, DestFailureFn on_failure, asio::ip::udp::socket socket);

  void Start() override;
  void Stop() override;
  void OnView(ServiceViewPtr view) override;
  void ListFlows(TimePoint now, std::vector<FlowEntry>& out) const override;

  struct Session;

  // Datagrams per recvmmsg, and full batches handled per wakeup before yielding.
  static constexpr size_t kReceiveBatch = 32;
  static constexpr int kBatchesPerWakeup = 8;

  // System calls made, for tests and benchmarks (not exported).
  struct IoStats {
    uint64_t client_receives = 0;  // recvmmsg on the service socket that returned datagrams
    uint64_t client_datagrams = 0;
    uint64_t upstream_sends = 0;  // sendmmsg towards destinations
    uint64_t reply_receives = 0;  // recvmmsg on upstream sockets that returned datagrams
    uint64_t reply_sends = 0;     // sendmmsg towards clients
    uint64_t dropped = 0;         // a full send buffer, or refused by the kernel
  };
  const IoStats& io_stats() const { return io_stats_; }

 private:
  void ArmClientRead();
  void DrainClients();
  void HandleClientBatch(size_t n);
  // The session the client's datagram belongs to (opened if need be), or nullptr when refused.
  Session* SessionFor(const ServiceView& view, const net::SockAddr& peer, TimePoint now);
  void ArmReplies(const std::shared_ptr<Session>& s);
  void DrainReplies(const std::shared_ptr<Session>& s);
  void RelayBatch(Session& s, size_t n);
  void CountSend(const net::MmsgSender::Outcome& o, uint64_t& calls);
  std::shared_ptr<Session> OpenSession(const net::SockAddr& peer, const vservice::AddrPort& client,
                                       bool one_packet);
  void CloseSession(Session& s);
  // The passive check: `s`'s destination answered ICMP port unreachable. Counted, reported to
  // the engine (which marks it and probes it), and the session ends, so that the client's next
  // datagram is scheduled again.
  void OnUnreachable(Session& s);
  // Passes the session on to the peer directors (the view's SyncOutbox).
  void NoteSession(const ServiceView& view, Session& s, TimePoint now);
  // Closes the sessions to `dest` and forgets them; returns how many.
  size_t EndSessions(const vservice::AddrPort& dest);
  void ArmExpiry();

  asio::io_context& io_;
  const Clock& clock_;
  DestPicker picker_;
  UdpNatOptions options_;
  DestFailureFn on_failure_;
  asio::ip::udp::socket socket_;
  vservice::UdpSessionTable table_;
  std::unordered_map<vservice::AddrPort, std::shared_ptr<Session>, vservice::AddrPortHash>
      sessions_;
  asio::steady_timer expiry_{io_};
  // Shared by the service socket and every upstream socket: each batch is relayed before the
  // handler that read it returns.
  net::MmsgReceiver rx_{kReceiveBatch, net::kMaxUdpPayload};
  net::MmsgSender tx_{kReceiveBatch};
  net::BatchGrouper<Session*> groups_;
  IoStats io_stats_;
  bool stopped_ = false;
};

}  // namespace vsc::director

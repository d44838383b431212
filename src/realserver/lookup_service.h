// LookupService: the resource lookup service of a real server on one worker (DESIGN §10), over
// UDP (plain requests, and requests forwarded by the director with a forward header: the answer
// goes straight to the client named there), TCP (length-framed) and HTTP
// (`GET /v1/resources/ID[,ID...]`, JSON; `GET /v1/snapshot` when a snapshot handler is set).
// Each worker owns its own SQLite read connection and its own SO_REUSEPORT sockets. While a
// snapshot is installed the reader is closed (CloseReader) and lookups are answered with status
// internal until ReopenReader.
//
// Thread: one worker; every method runs on that worker's io_context (Start before it runs).
#pragma once

#include <asio.hpp>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/counter.h"
#include "net/http_server.h"
#include "net/tcp_listener.h"
#include "net/udp_batch.h"
#include "realserver/load_monitor.h"
#include "store/resource_store.h"

namespace vsc::realserver {

struct ServiceCounters {
  Counter requests;           // lookup requests answered (all transports)
  Counter lookups;            // ids looked up
  Counter not_found;          // ids not in the database
  Counter forwarded;          // UDP requests that came with a forward header (dr)
  Counter dropped_malformed;  // not a lookup request
  Counter dropped_untrusted;  // forward header from an address not allowed to forward
  Counter errors;             // store errors (answered with status internal)
  Counter tcp_sessions;
  Counter http_requests;
  Counter dropped_truncated;  // datagrams over the size limit, truncated by the kernel
};

class LookupService {
 public:
  // `reader` may be empty (a new server whose database has no resources table yet): lookups are
  // then answered with status internal until ReopenReader succeeds.
  LookupService(asio::io_context& io, const Clock& clock,
                std::optional<store::ResourceReader> reader, LoadTracker& load,
                std::vector<asio::ip::address> trusted_forwarders)
      : io_(io),
        clock_(clock),
        reader_(std::move(reader)),
        load_(load),
        trusted_(std::move(trusted_forwarders)) {}

  // Binds UDP and TCP on `lookup` and HTTP on `http` (ports may be 0 for the first worker; the
  // others pass the ports it got). On an IPv6 address, forwarded requests of IPv6 clients (the
  // forward header's IPv6 form) are answered to them directly.
  Status Start(const asio::ip::address& address, uint16_t lookup_port, uint16_t http_port);
  void Stop();
  // Serves `GET /v1/snapshot` with `handler` (set before Start).
  void SetSnapshotHandler(std::function<net::HttpResponse(const net::HttpRequest&)> handler) {
    snapshot_handler_ = std::move(handler);
  }
  // Serves `GET /metrics` (Prometheus text) with `render` (set before Start).
  void SetMetricsHandler(std::function<std::string()> render) { metrics_ = std::move(render); }
  void CloseReader() { reader_.reset(); }
  Status ReopenReader(const std::string& path);
  uint16_t lookup_port() const { return udp_ ? udp_->local_port() : 0; }
  uint16_t http_port() const { return http_ ? http_->local_port() : 0; }
  const ServiceCounters& counters() const { return counters_; }

 private:
  void HandleDatagrams(std::span<net::Datagram> in, net::SendBatch& out);
  // Answers one encoded request into `out`; returns bytes written (0: drop).
  size_t Answer(std::span<const uint8_t> request, std::span<uint8_t> out);
  net::HttpResponse HandleHttp(const net::HttpRequest& request);
  static asio::awaitable<void> TcpSession(LookupService* self, asio::ip::tcp::socket socket);

  asio::io_context& io_;
  const Clock& clock_;
  std::optional<store::ResourceReader> reader_;
  std::function<net::HttpResponse(const net::HttpRequest&)> snapshot_handler_;
  std::function<std::string()> metrics_;
  uint64_t truncated_seen_ = 0;
  LoadTracker& load_;
  std::vector<asio::ip::address> trusted_;
  std::vector<store::LookupResult> results_;
  ServiceCounters counters_;
  std::unique_ptr<net::UdpBatchSocket> udp_;
  std::unique_ptr<net::TcpListener> tcp_;
  std::unique_ptr<net::HttpServer> http_;
};

}  // namespace vsc::realserver

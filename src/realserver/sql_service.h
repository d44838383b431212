// SqlService: a real server's SQL read service on one worker ("sql-udp", DESIGN §7 read path).
//
// One datagram in = one ReadRequest: an optional 12-byte forward header (the director's, from a
// trusted forwarder only, as for lookups) then an envelope (envelope.h) sealed with the cluster
// key. The HMAC is verified; replays are not checked (a read is idempotent and its answer goes
// to the address the authenticated director named, or back to the sender). The query runs on
// this worker's read connection (SqlReader); the ReadResponse, sealed with the key under the
// replica's id, goes to the client named in the forward header, else to the sender. Datagrams
// that are not authenticated ReadRequests are dropped (never answered: no reflection) and
// counted.
// The TCP read path ("sql-tcp", for the director's HTTP API): the same reads, any size, the
// answer in pages (SqlReader::Paged) on the connection the request came on, each page made once
// the one before it is written (a slow reader holds one page here, not the answer); the director
// is the only client, authenticated by the same HMAC. A request with `backup` set is answered
// with a consistent copy of the database file instead (BackupPages, for GET /db/backup). A query
// in progress holds a read connection of its own (kept for the next answer, up to
// kIdleTcpReaders per worker), so it never blocks the datagram reads; a snapshot install
// (CloseReader) ends the answers in progress with a "replica is installing a snapshot" page.
//
// Thread: one worker; every method on that worker's io_context (Start before it runs).
#pragma once

#include <asio.hpp>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/counter.h"
#include "net/tcp_listener.h"
#include "net/udp_batch.h"
#include "proto/auth.h"
#include "proto/cluster_key.h"
#include "proto/envelope.h"
#include "realserver/sql_reader.h"

namespace vsc::realserver {

struct SqlCounters {
  Counter requests;           // reads answered (ok or not)
  Counter refused;            // answered with ok=false (SQL error, not applied yet, too large)
  Counter forwarded;          // came with a forward header
  Counter dropped_malformed;  // not an envelope, not a ReadRequest
  Counter dropped_unauthenticated;
  Counter dropped_untrusted;  // forward header from an address not allowed to forward
  Counter tcp_pages;          // pages made on the TCP read path (each once the last is written)
};

class SqlService {
 public:
  static constexpr size_t kIdleTcpReaders = 4;

  SqlService(asio::io_context& io, std::string replica_id, const proto::ClusterKey& key,
             std::vector<asio::ip::address> trusted_forwarders, std::string db_path,
             int64_t counter_start);

  // Binds UDP on `port` and TCP on `tcp_port` (0 = any; the other workers pass the ports the
  // first one got) with SO_REUSEPORT. Reads are answered with an error until ReopenReader opens
  // the read connection (RealServer binds every socket before it opens the database).
  Status Start(const asio::ip::address& address, uint16_t port, uint16_t tcp_port);
  void Stop();
  // For a snapshot install: closes the read connection (reads are answered with an error until
  // Reopen), then reopens it on the (new) file.
  void CloseReader();
  Status ReopenReader();

  uint16_t port() const { return udp_ ? udp_->local_port() : 0; }
  uint16_t tcp_port() const { return tcp_ ? tcp_->local_port() : 0; }
  const SqlCounters& counters() const { return counters_; }

 private:
  void HandleDatagrams(std::span<net::Datagram> in, net::SendBatch& out);
  struct TcpSessionState;
  // "sql-tcp": length frames of sealed envelopes, a ReadRequest in, its pages out.
  static asio::awaitable<void> TcpSession(SqlService* self, asio::ip::tcp::socket socket);
  // Writes the answer to one request, a page at a time. False when the connection failed.
  static asio::awaitable<bool> Answer(SqlService* self, std::shared_ptr<TcpSessionState> session,
                                      const proto::ReadRequest& request);
  // Starts the answer: session.source (and session.reader for a query).
  void OpenAnswer(TcpSessionState& session, const proto::ReadRequest& request);
  // Ends it: the source is destroyed and the reader kept for the next answer.
  void CloseAnswer(TcpSessionState& session);
  // The framed, sealed page. `last`: the answer ends with it (a page that cannot be sealed is
  // replaced by an error page, which ends it).
  std::vector<uint8_t> SealPage(proto::ReadResponse page, bool* last);

  asio::io_context& io_;
  std::string replica_id_;
  proto::EnvelopeCodec codec_;
  proto::CounterSource counter_;
  std::vector<asio::ip::address> trusted_;
  std::string db_path_;
  std::optional<SqlReader> reader_;
  SqlCounters counters_;
  std::unique_ptr<net::UdpBatchSocket> udp_;
  std::unique_ptr<net::TcpListener> tcp_;
  std::vector<std::unique_ptr<SqlReader>> idle_tcp_readers_;  // at most kIdleTcpReaders
  std::set<std::shared_ptr<TcpSessionState>> tcp_sessions_;   // closed by Stop
  bool stopping_ = false;
};

}  // namespace vsc::realserver

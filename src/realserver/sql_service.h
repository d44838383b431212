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
// answer in pages (SqlReader::RunPaged) on the connection the request came on; the director is
// the only client, authenticated by the same HMAC. A request with `backup` set is answered with a
// consistent copy of the database file instead (BackupPages, for GET /db/backup).
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
};

class SqlService {
 public:
  SqlService(asio::io_context& io, std::string replica_id, const proto::ClusterKey& key,
             std::vector<uint32_t> trusted_forwarders, std::string db_path,
             int64_t counter_start);

  // Binds UDP on `port` and TCP on `tcp_port` (0 = any; the other workers pass the ports the
  // first one got) with SO_REUSEPORT. Reads are answered with an error until ReopenReader opens
  // the read connection (RealServer binds every socket before it opens the database).
  Status Start(const asio::ip::address_v4& address, uint16_t port, uint16_t tcp_port);
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
  // "sql-tcp": length frames of sealed envelopes, a ReadRequest in, its pages out.
  static asio::awaitable<void> TcpSession(SqlService* self, asio::ip::tcp::socket socket);
  // The sealed, framed pages answering one request (the query runs here, on the worker).
  std::vector<uint8_t> AnswerPaged(const proto::ReadRequest& request);

  asio::io_context& io_;
  std::string replica_id_;
  proto::EnvelopeCodec codec_;
  proto::CounterSource counter_;
  std::vector<uint32_t> trusted_;  // host order
  std::string db_path_;
  std::optional<SqlReader> reader_;
  SqlCounters counters_;
  std::unique_ptr<net::UdpBatchSocket> udp_;
  std::unique_ptr<net::TcpListener> tcp_;
  std::set<std::shared_ptr<asio::ip::tcp::socket>> tcp_sessions_;  // closed by Stop
  bool stopping_ = false;
};

}  // namespace vsc::realserver

// SQL clients for the replicated database (DESIGN §7):
//
// WriteClient: one TCP connection to the director's write port (default 7300). Each request is a
// WriteRequest (one statement, or several applied atomically as one unit) in an envelope sealed
// with the cluster key, framed by a 4-byte length (frame.h); the director answers with a
// WriteResponse, only once the commit policy is met (or with a refusal that applied nothing).
// Requests may be pipelined: Send several, then Receive the answers (matched by request_id).
//
// ReadClient: UDP to the director's SQL read port (default 7301). One sealed ReadRequest per
// datagram; in dr mode the replica answers from its own address, so an answer is accepted from
// ANY source, provided its HMAC verifies and its request_id is the outstanding one. On timeout
// the same request is sent again `retries` times.
//
// WriteClient::Read runs a SELECT of any size on the same connection: the director relays it to
// a replica's TCP read path and streams the replica's pages back (director/read_relay.h).
//
// Both are blocking and thread-compatible (one client per thread), movable, not copyable.
// An answer with ok=false is a successful call (look at ok/error); transport failures are
// errors: Unavailable on timeout or a closed connection, IoError for socket failures,
// InvalidArgument for a request too large to send, Unauthenticated when the director answered
// the auth-failed frame (wrong cluster key) or its answer does not verify. Reads cannot tell a
// wrong key from a dead port (the director answers no unauthenticated datagram); their timeout
// error names both.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "common/unique_fd.h"
#include "net/endpoint.h"
#include "proto/cluster_key.h"
#include "proto/control.pb.h"
#include "proto/envelope.h"
#include "proto/frame.h"

namespace vsc::client {

inline constexpr uint16_t kDefaultWritePort = 7300;
inline constexpr uint16_t kDefaultSqlReadPort = 7301;
// A read request or answer never exceeds one datagram of this size.
inline constexpr size_t kMaxSqlDatagram = 60 * 1024;

// Where `vsc sql --director` points: "HOST", "HOST:WRITE_PORT" or "HOST:WRITE_PORT,READ_PORT"
// (defaults 7300 and 7301); an IPv6 HOST bare ("::1", no ports then) or in brackets
// ("[::1]:7300").
struct SqlDirector {
  std::string host;
  uint16_t write_port = kDefaultWritePort;
  uint16_t read_port = kDefaultSqlReadPort;
};
Result<SqlDirector> ParseSqlDirector(std::string_view text);

// Statement helpers.
proto::SqlStatement MakeStatement(std::string sql, std::vector<proto::SqlValue> params = {});
proto::SqlValue SqlInt(int64_t v);
proto::SqlValue SqlReal(double v);
proto::SqlValue SqlText(std::string v);
proto::SqlValue SqlBlob(std::string v);
proto::SqlValue SqlNull();

// A unique envelope sender for this process's n-th client ("sql-<pid>-<n>-<salt>"), so the
// director's replay windows of different clients never collide.
std::string NewClientSender();

class WriteClient {
 public:
  static Result<WriteClient> Connect(const std::string& host, uint16_t port,
                                     const proto::ClusterKey& key,
                                     Duration timeout = std::chrono::seconds(10),
                                     const Clock* clock = nullptr);
  WriteClient(WriteClient&&) noexcept;
  WriteClient& operator=(WriteClient&&) noexcept;
  ~WriteClient();

  // Sends one request and waits for its answer. A non-empty `idempotency_key` makes a retry
  // safe: sent again with the same key after an answer was lost (a failover, a broken
  // connection), the write is applied at most once and the retry's answer is the original's
  // (WriteResponse.duplicate). At most 128 bytes of printable ASCII; not with DDL.
  Result<proto::WriteResponse> Execute(std::vector<proto::SqlStatement> statements,
                                       std::string idempotency_key = "");
  // Queues and sends one request; returns its request_id.
  Result<uint64_t> Send(std::vector<proto::SqlStatement> statements,
                        std::string idempotency_key = "");
  // The next answer, waiting up to the client's timeout.
  Result<proto::WriteResponse> Receive();
  // Runs one SELECT through the director's read relay on this connection, on a replica that
  // has applied `min_seq`. Each ok page goes to `on_page` in order as it arrives (the client
  // holds one page at a time); an error from `on_page` stops the read and closes the connection
  // (reconnect for the next request). The result: the last page's ok, error, applied_seq and
  // replica_id, without rows. `timeout` bounds the wait for each page, not the whole answer.
  // Call with no write outstanding.
  using PageSink = std::function<Status(const proto::ReadResponse& page)>;
  Result<proto::ReadResponse> Read(const proto::SqlStatement& statement, uint64_t min_seq,
                                   const PageSink& on_page);
  // Non-blocking: appends every answer already received to `out`. For poll-driven callers.
  Status ReceiveAvailable(std::vector<proto::WriteResponse>& out);
  int fd() const { return fd_.get(); }
  // Requests sent and not yet answered.
  size_t outstanding() const { return outstanding_; }

 private:
  WriteClient(UniqueFd fd, const proto::ClusterKey& key, Duration timeout, const Clock* clock,
              std::string target);
  Status SendMessage(const proto::Message& m);
  Result<std::optional<proto::Message>> NextMessage();
  Result<std::optional<proto::WriteResponse>> NextBuffered();
  // The next message, waiting up to the timeout.
  Result<proto::Message> ReceiveMessage();
  Status ReadSome(bool block, TimePoint deadline);

  UniqueFd fd_;
  std::unique_ptr<proto::EnvelopeCodec> codec_;
  std::unique_ptr<proto::CounterSource> counter_;
  std::string sender_;
  Duration timeout_;
  const Clock* clock_;
  std::string target_;
  proto::FrameDecoder decoder_{proto::kMaxEnvelopeBytes};
  uint64_t next_request_id_ = 1;
  size_t outstanding_ = 0;
};

class ReadClient {
 public:
  static Result<ReadClient> Open(const std::string& host, uint16_t port,
                                 const proto::ClusterKey& key,
                                 Duration timeout = std::chrono::seconds(1), int retries = 1,
                                 const Clock* clock = nullptr);
  ReadClient(ReadClient&&) noexcept;
  ReadClient& operator=(ReadClient&&) noexcept;
  ~ReadClient();

  // Runs one SELECT on a replica that has applied at least `min_seq`.
  Result<proto::ReadResponse> Query(const proto::SqlStatement& statement, uint64_t min_seq = 0);

  uint64_t stale_answers() const { return stale_answers_; }      // other request_id
  uint64_t unauthenticated() const { return unauthenticated_; }  // bad HMAC or not an envelope
  uint64_t retransmissions() const { return retransmissions_; }
  uint16_t local_port() const { return local_port_; }

 private:
  ReadClient(UniqueFd fd, net::SockAddr target, const proto::ClusterKey& key, Duration timeout,
             int retries, const Clock* clock, uint16_t local_port);
  Result<proto::ReadResponse> AwaitAnswer(uint64_t request_id, TimePoint deadline);

  UniqueFd fd_;
  net::SockAddr target_;
  std::unique_ptr<proto::EnvelopeCodec> codec_;
  std::unique_ptr<proto::CounterSource> counter_;
  std::string sender_;
  Duration timeout_;
  int retries_;
  const Clock* clock_;
  uint16_t local_port_;
  uint64_t next_request_id_ = 1;
  uint64_t stale_answers_ = 0;
  uint64_t unauthenticated_ = 0;
  uint64_t retransmissions_ = 0;
};

}  // namespace vsc::client

// SqlTcpReader: the director's client of a replica's TCP read path ("sql-tcp",
// realserver/sql_service.h), for the HTTP API: one connection per read, one sealed ReadRequest
// out, its pages in (each a sealed ReadResponse, `more` on all but the last), handed to the
// caller's sink as they arrive so a large result is never held twice. `timeout` bounds each
// wait: the connect and the first page, then each next page (the socket is closed when it
// passes), so a large result that keeps streaming is not cut off by its total time.
//
// Thread: the control thread (one io_context). The reader owns its envelope codec and counter.
#pragma once

#include <asio.hpp>
#include <functional>
#include <string>

#include "common/clock.h"
#include "common/status.h"
#include "net/endpoint.h"
#include "proto/auth.h"
#include "proto/envelope.h"

namespace vsc::director {

struct TcpReadResult {
  Status transport;  // not ok: no complete answer (connect, timeout, bad frame)
  bool ok = false;   // the replica's answer: ok, or `error`
  std::string error;
  uint64_t applied_seq = 0;
  std::string replica_id;
};

class SqlTcpReader {
 public:
  // Called for each ok page in order; the last page has more() == false.
  using PageSink = std::function<void(const proto::ReadResponse&)>;

  SqlTcpReader(asio::io_context& io, const proto::ClusterKey& key, const Clock& clock);

  asio::awaitable<TcpReadResult> Read(net::SockAddr replica, proto::ReadRequest request,
                                      Duration timeout, PageSink sink);

 private:
  asio::io_context& io_;
  proto::EnvelopeCodec codec_;
  proto::CounterSource counter_;
};

}  // namespace vsc::director

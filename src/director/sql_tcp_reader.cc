#include "director/sql_tcp_reader.h"

#include "net/as_tuple.h"
#include "net/endpoint.h"
#include "proto/frame.h"

namespace vsc::director {

using net::kTuple;

SqlTcpReader::SqlTcpReader(asio::io_context& io, const proto::ClusterKey& key, const Clock& clock)
    : io_(io), codec_(key), counter_(clock.WallMicros()) {}

asio::awaitable<TcpReadResult> SqlTcpReader::Read(net::SockAddr replica, proto::ReadRequest request,
                                                  Duration timeout, PageSink sink) {
  TcpReadResult out;
  auto socket = std::make_shared<asio::ip::tcp::socket>(io_);
  asio::steady_timer deadline(io_);
  std::weak_ptr<asio::ip::tcp::socket> weak = socket;
  auto timed_out = std::make_shared<bool>(false);
  // Armed for the connect and the first page, and again after each page: a large result that
  // keeps coming is never cut off by its total time, a replica that goes silent is.
  auto arm = [&deadline, weak, timed_out, timeout] {
    deadline.expires_after(timeout);  // cancels the previous wait
    deadline.async_wait([weak, timed_out](const asio::error_code& ec) {
      if (ec) return;
      *timed_out = true;
      if (auto s = weak.lock()) {
        asio::error_code ignore;
        s->close(ignore);
      }
    });
  };
  arm();
  const auto udp = net::ToUdpEndpoint(replica);
  const asio::ip::tcp::endpoint ep(udp.address(), udp.port());
  const std::string where = ep.address().to_string() + ":" + std::to_string(ep.port());
  auto fail = [&](const std::string& what) {
    out.transport = IoError("replica read " + where + ": " +
                            (*timed_out ? "no answer within the read timeout" : what));
    return out;
  };
  auto [cec] = co_await socket->async_connect(ep, kTuple);
  if (cec) co_return fail("connect: " + cec.message());
  asio::error_code ignore;
  socket->set_option(asio::ip::tcp::no_delay(true), ignore);
  proto::Message m;
  *m.mutable_read_request() = std::move(request);
  auto sealed = codec_.TrySeal("director", counter_.Next(), m);
  if (!sealed.ok()) co_return fail("the request is too large: " + sealed.status().message());
  std::vector<uint8_t> frame;
  proto::AppendFrame(frame, *sealed);
  auto [wec, wn] = co_await asio::async_write(*socket, asio::buffer(frame), kTuple);
  if (wec) co_return fail("send: " + wec.message());
  proto::FrameDecoder decoder(proto::kMaxEnvelopeBytes);
  std::vector<uint8_t> buf(64 * 1024);
  for (;;) {
    auto next = decoder.Next();
    if (!next.ok()) co_return fail("bad frame: " + next.status().message());
    if (!next->has_value()) {
      auto [rec, n] = co_await socket->async_read_some(asio::buffer(buf), kTuple);
      if (rec) co_return fail("the replica closed the connection mid-answer: " + rec.message());
      decoder.Feed(std::span<const uint8_t>(buf.data(), n));
      continue;
    }
    auto opened = codec_.Open(**next);
    if (!opened.ok() || !opened->message.has_read_response()) {
      co_return fail("the answer is not a sealed ReadResponse (wrong cluster key?)");
    }
    const proto::ReadResponse& page = opened->message.read_response();
    out.applied_seq = page.applied_seq();
    out.replica_id = page.replica_id();
    if (!page.ok()) {
      out.error = page.error();
      break;
    }
    sink(page);
    if (!page.more()) {
      out.ok = true;
      break;
    }
    arm();
  }
  deadline.cancel();
  socket->close(ignore);
  co_return out;
}

}  // namespace vsc::director

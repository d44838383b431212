#include "realserver/sql_service.h"

#include <arpa/inet.h>

#include <algorithm>
#include <asio/experimental/as_tuple.hpp>

#include "proto/frame.h"
#include "proto/lookup_codec.h"
#include "realserver/backup_pages.h"
#include "realserver/forwarding.h"
#include "realserver/read_response_builder.h"

namespace vsc::realserver {
namespace {

// A backup travels in pages of this much of the file (well under one envelope).
constexpr size_t kBackupChunkBytes = size_t{1} << 20;

}  // namespace

SqlService::SqlService(asio::io_context& io, std::string replica_id, const proto::ClusterKey& key,
                       std::vector<uint32_t> trusted_forwarders, std::string db_path,
                       int64_t counter_start)
    : io_(io),
      replica_id_(std::move(replica_id)),
      codec_(key),
      counter_(counter_start),
      trusted_(std::move(trusted_forwarders)),
      db_path_(std::move(db_path)) {}

Status SqlService::Start(const asio::ip::address_v4& address, uint16_t port, uint16_t tcp_port) {
  net::UdpBatchOptions options;
  options.reuse_port = true;
  options.batch = 16;
  options.max_datagram = 64 * 1024;
  VSC_ASSIGN_OR_RETURN(udp_, net::UdpBatchSocket::Bind(io_, {address, port}, options));
  auto tcp = net::TcpListener::Listen(io_, {address, tcp_port}, /*reuse_port=*/true);
  if (!tcp.ok()) return tcp.status().Annotate("SQL TCP read port");
  tcp_ = std::move(tcp).value();
  udp_->Start([this](std::span<net::Datagram> in, net::SendBatch& out) { HandleDatagrams(in, out); });
  tcp_->Start([this](asio::ip::tcp::socket socket) {
    if (stopping_) return;
    asio::error_code ignore;
    socket.set_option(asio::ip::tcp::no_delay(true), ignore);
    asio::co_spawn(io_, TcpSession(this, std::move(socket)), asio::detached);
  });
  return Status::Ok();
}

void SqlService::Stop() {
  stopping_ = true;
  if (udp_) udp_->Stop();
  if (tcp_) tcp_->Stop();
  asio::error_code ignore;
  for (const auto& s : tcp_sessions_) s->close(ignore);
}

std::vector<uint8_t> SqlService::AnswerPaged(const proto::ReadRequest& req) {
  std::vector<uint8_t> out;
  auto emit = [&](proto::ReadResponse page) {
    if (!page.ok()) {
      counters_.refused.Add();
      out.clear();  // the pages before an error are of no use to the reader
    }
    proto::Message m;
    *m.mutable_read_response() = std::move(page);
    auto sealed = codec_.TrySeal(replica_id_, counter_.Next(), m);
    if (!sealed.ok()) {
      proto::Message e;
      *e.mutable_read_response() = ReadResponseBuilder::Error(
          req.request_id(), m.read_response().applied_seq(), replica_id_,
          "internal error: a page could not be sealed: " + sealed.status().message());
      out.clear();
      sealed = codec_.TrySeal(replica_id_, counter_.Next(), e);
      if (!sealed.ok()) return;
    }
    proto::AppendFrame(out, *sealed);
  };
  if (reader_ && req.backup()) {
    BackupPages(db_path_, req, replica_id_, kBackupChunkBytes, SqlReader::PageLimits{}.max_bytes,
                emit);
  } else if (reader_) {
    reader_->RunPaged(req, replica_id_, SqlReader::PageLimits{}, emit);
  } else {
    emit(ReadResponseBuilder::Error(
        req.request_id(), 0, replica_id_,
        "replica is installing a snapshot; retry in a moment or read from another replica"));
  }
  counters_.requests.Add();
  return out;
}

asio::awaitable<void> SqlService::TcpSession(SqlService* self, asio::ip::tcp::socket socket) {
  auto shared = std::make_shared<asio::ip::tcp::socket>(std::move(socket));
  self->tcp_sessions_.insert(shared);
  constexpr auto kTuple = asio::experimental::as_tuple(asio::use_awaitable);
  proto::FrameDecoder decoder(proto::kMaxEnvelopeBytes);
  std::vector<uint8_t> buf(64 * 1024);
  bool close = false;
  while (!close && !self->stopping_) {
    auto [ec, n] = co_await shared->async_read_some(asio::buffer(buf), kTuple);
    if (ec) break;
    decoder.Feed(std::span<const uint8_t>(buf.data(), n));
    for (;;) {
      auto frame = decoder.Next();
      if (!frame.ok()) {
        self->counters_.dropped_malformed.Add();
        close = true;
        break;
      }
      if (!frame->has_value()) break;
      auto opened = self->codec_.Open(**frame);
      if (!opened.ok() || !opened->message.has_read_request()) {
        if (!opened.ok() && opened.status().code() == Code::kUnauthenticated) {
          self->counters_.dropped_unauthenticated.Add();
        } else {
          self->counters_.dropped_malformed.Add();
        }
        close = true;  // never answered: the peer does not hold the cluster key
        break;
      }
      std::vector<uint8_t> out = self->AnswerPaged(opened->message.read_request());
      auto [wec, wn] = co_await asio::async_write(*shared, asio::buffer(out), kTuple);
      if (wec) {
        close = true;
        break;
      }
    }
  }
  asio::error_code ignore;
  shared->close(ignore);
  self->tcp_sessions_.erase(shared);
}

void SqlService::CloseReader() { reader_.reset(); }

Status SqlService::ReopenReader() {
  reader_.reset();
  auto r = SqlReader::Open(db_path_);
  if (!r.ok()) return r.status().Annotate("opening the SQL read connection");
  reader_.emplace(std::move(r).value());
  return Status::Ok();
}


void SqlService::HandleDatagrams(std::span<net::Datagram> in, net::SendBatch& out) {
  for (net::Datagram& d : in) {
    const Inbound inbound = ResolveForwarding(d.data, d.peer, trusted_);
    if (inbound.verdict == Inbound::Verdict::kMalformed) {
      counters_.dropped_malformed.Add();
      continue;
    }
    if (inbound.verdict == Inbound::Verdict::kUntrusted) {
      counters_.dropped_untrusted.Add();
      continue;
    }
    if (inbound.verdict == Inbound::Verdict::kForwarded) counters_.forwarded.Add();
    std::span<const uint8_t> payload = inbound.payload;
    const sockaddr_in& reply_to = inbound.reply_to;
    auto opened = codec_.Open(payload);
    if (!opened.ok()) {
      if (opened.status().code() == Code::kUnauthenticated) {
        counters_.dropped_unauthenticated.Add();
      } else {
        counters_.dropped_malformed.Add();
      }
      continue;
    }
    if (!opened->message.has_read_request()) {
      counters_.dropped_malformed.Add();
      continue;
    }
    const proto::ReadRequest& req = opened->message.read_request();
    proto::Message m;
    if (reader_) {
      *m.mutable_read_response() = reader_->Run(req, replica_id_, replica_id_.size());
    } else {
      *m.mutable_read_response() = ReadResponseBuilder::Error(
          req.request_id(), 0, replica_id_,
          "replica is installing a snapshot; retry in a moment or read from another replica");
    }
    counters_.requests.Add();
    if (!m.read_response().ok()) counters_.refused.Add();
    auto sealed = codec_.TrySeal(replica_id_, counter_.Next(), m);
    if (!sealed.ok() || sealed->size() > kMaxSqlDatagram) {
      // The builder bounds the answer, so this is a bug; answer with the error, not silence.
      proto::Message e;
      *e.mutable_read_response() = ReadResponseBuilder::Error(
          req.request_id(), m.read_response().applied_seq(), replica_id_,
          "internal error: the answer could not be encoded within one datagram");
      sealed = codec_.TrySeal(replica_id_, counter_.Next(), e);
      if (!sealed.ok()) continue;
    }
    std::span<uint8_t> buf = out.Prepare(sealed->size());
    std::copy(sealed->begin(), sealed->end(), buf.begin());
    out.Commit(sealed->size(), reply_to);
  }
}

}  // namespace vsc::realserver

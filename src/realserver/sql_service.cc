#include "realserver/sql_service.h"

#include <arpa/inet.h>

#include <algorithm>

#include "net/as_tuple.h"
#include "proto/frame.h"
#include "proto/lookup_codec.h"
#include "realserver/backup_pages.h"
#include "realserver/forwarding.h"
#include "realserver/read_response_builder.h"

namespace vsc::realserver {

using net::kTuple;
namespace {

// A backup travels in pages of this much of the file (well under one envelope).
constexpr size_t kBackupChunkBytes = size_t{1} << 20;

constexpr const char* kInstalling =
    "replica is installing a snapshot; retry in a moment or read from another replica";

std::unique_ptr<PageSource> ErrorPage(const proto::ReadRequest& req, const std::string& replica,
                                      const std::string& message) {
  return std::make_unique<SinglePage>(
      ReadResponseBuilder::Error(req.request_id(), 0, replica, message));
}

}  // namespace

struct SqlService::TcpSessionState {
  explicit TcpSessionState(asio::ip::tcp::socket s) : socket(std::move(s)) {}
  asio::ip::tcp::socket socket;
  std::unique_ptr<SqlReader> reader;   // the query's read connection, while it runs
  std::unique_ptr<PageSource> source;  // the answer in progress (borrows `reader`)
};

SqlService::SqlService(asio::io_context& io, std::string replica_id, const proto::ClusterKey& key,
                       std::vector<asio::ip::address> trusted_forwarders, std::string db_path,
                       int64_t counter_start)
    : io_(io),
      replica_id_(std::move(replica_id)),
      codec_(key),
      counter_(counter_start),
      trusted_(std::move(trusted_forwarders)),
      db_path_(std::move(db_path)) {}

Status SqlService::Start(const asio::ip::address& address, uint16_t port, uint16_t tcp_port) {
  net::UdpBatchOptions options;
  options.reuse_port = true;
  options.batch = 16;
  options.max_datagram = 64 * 1024;
  VSC_ASSIGN_OR_RETURN(udp_, net::UdpBatchSocket::Bind(io_, {address, port}, options));
  auto tcp = net::TcpListener::Listen(io_, {address, tcp_port}, /*reuse_port=*/true);
  if (!tcp.ok()) return tcp.status().Annotate("SQL TCP read port");
  tcp_ = std::move(tcp).value();
  udp_->Start(
      [this](std::span<net::Datagram> in, net::SendBatch& out) { HandleDatagrams(in, out); });
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
  for (const auto& s : tcp_sessions_) s->socket.close(ignore);
}

void SqlService::OpenAnswer(TcpSessionState& session, const proto::ReadRequest& req) {
  counters_.requests.Add();
  if (!reader_) {
    session.source = ErrorPage(req, replica_id_, kInstalling);
  } else if (req.backup()) {
    session.source = BackupPages(db_path_, req, replica_id_, kBackupChunkBytes,
                                 SqlReader::PageLimits{}.max_bytes);
  } else {
    if (!idle_tcp_readers_.empty()) {
      session.reader = std::move(idle_tcp_readers_.back());
      idle_tcp_readers_.pop_back();
    } else if (auto opened = SqlReader::Open(db_path_); opened.ok()) {
      session.reader = std::make_unique<SqlReader>(std::move(opened).value());
    } else {
      session.source = ErrorPage(
          req, replica_id_,
          "replica store error: cannot open a read connection: " + opened.status().message());
      return;
    }
    session.source = session.reader->Paged(req, replica_id_, SqlReader::PageLimits{});
  }
}

void SqlService::CloseAnswer(TcpSessionState& session) {
  session.source.reset();  // before its reader
  if (session.reader && reader_ && idle_tcp_readers_.size() < kIdleTcpReaders) {
    idle_tcp_readers_.push_back(std::move(session.reader));
  }
  session.reader.reset();
}

std::vector<uint8_t> SqlService::SealPage(proto::ReadResponse page, bool* last) {
  *last = !page.ok() || !page.more();
  if (!page.ok()) counters_.refused.Add();
  const uint64_t request_id = page.request_id();
  const uint64_t seq = page.applied_seq();
  proto::Message m;
  *m.mutable_read_response() = std::move(page);
  auto sealed = codec_.TrySeal(replica_id_, counter_.Next(), m);
  if (!sealed.ok()) {
    *last = true;
    counters_.refused.Add();
    proto::Message e;
    *e.mutable_read_response() = ReadResponseBuilder::Error(
        request_id, seq, replica_id_,
        "internal error: a page could not be sealed: " + sealed.status().message());
    sealed = codec_.TrySeal(replica_id_, counter_.Next(), e);
    if (!sealed.ok()) return {};
  }
  std::vector<uint8_t> out;
  proto::AppendFrame(out, *sealed);
  return out;
}

asio::awaitable<bool> SqlService::Answer(SqlService* self, std::shared_ptr<TcpSessionState> session,
                                         const proto::ReadRequest& req) {
  self->OpenAnswer(*session, req);
  bool last = false;
  while (!last) {
    // CloseReader (a snapshot install) took the source away while a page was being written.
    std::optional<proto::ReadResponse> page =
        session->source
            ? session->source->Next()
            : ReadResponseBuilder::Error(req.request_id(), 0, self->replica_id_, kInstalling);
    if (!page) break;
    self->counters_.tcp_pages.Add();
    std::vector<uint8_t> out = self->SealPage(std::move(*page), &last);
    if (out.empty()) break;
    auto [ec, n] = co_await asio::async_write(session->socket, asio::buffer(out), kTuple);
    if (ec) {
      self->CloseAnswer(*session);
      co_return false;
    }
  }
  self->CloseAnswer(*session);
  co_return true;
}

asio::awaitable<void> SqlService::TcpSession(SqlService* self, asio::ip::tcp::socket socket) {
  auto session = std::make_shared<TcpSessionState>(std::move(socket));
  self->tcp_sessions_.insert(session);
  proto::FrameDecoder decoder(proto::kMaxEnvelopeBytes);
  std::vector<uint8_t> buf(64 * 1024);
  bool close = false;
  while (!close && !self->stopping_) {
    auto [ec, n] = co_await session->socket.async_read_some(asio::buffer(buf), kTuple);
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
      if (!co_await Answer(self, session, opened->message.read_request())) {
        close = true;
        break;
      }
    }
  }
  asio::error_code ignore;
  session->socket.close(ignore);
  self->tcp_sessions_.erase(session);
}

void SqlService::CloseReader() {
  reader_.reset();
  idle_tcp_readers_.clear();
  for (const auto& session : tcp_sessions_) {
    session->source.reset();  // the answer in progress ends with kInstalling
    session->reader.reset();
  }
}

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
    const net::SockAddr& reply_to = inbound.reply_to;
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
      *m.mutable_read_response() =
          ReadResponseBuilder::Error(req.request_id(), 0, replica_id_, kInstalling);
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

#include "client/sql_client.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstring>

#include "client/lookup_target.h"
#include "client/socket_wait.h"
#include "proto/session_frames.h"

namespace vsc::client {
namespace {

int MillisLeft(TimePoint deadline, const Clock& clock) {
  const Duration left = deadline - clock.Now();
  if (left <= Duration::zero()) return 0;
  return static_cast<int>(
      std::max<int64_t>(1, std::chrono::duration_cast<std::chrono::milliseconds>(left).count()));
}

std::string TimeoutText(Duration d) {
  return std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(d).count()) + " ms";
}

bool ParsePort(std::string_view s, uint16_t& out) {
  unsigned v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || p != s.data() + s.size() || v == 0 || v > 65535) {
    return false;
  }
  out = static_cast<uint16_t>(v);
  return true;
}

}  // namespace

Result<SqlDirector> ParseSqlDirector(std::string_view text) {
  const std::string shape =
      "--director '" + std::string(text) +
      "': expected HOST, HOST:WRITE_PORT or HOST:WRITE_PORT,READ_PORT (an IPv6 HOST bare, "
      "::1, or in brackets, [::1]:7300)";
  SqlDirector d;
  // Where the host ends: at a bracketed IPv6 address's ']', at the end of a bare IPv6 one (two
  // colons or more: no ports), else at the last colon.
  size_t end = text.rfind(':');
  if (text.starts_with('[')) {
    end = text.find(']');
    if (end == std::string_view::npos) return InvalidArgument(shape);
    ++end;
    if (end < text.size() && text[end] != ':') return InvalidArgument(shape);
  } else if (text.find(':') != end) {
    end = std::string_view::npos;
  }
  d.host = std::string(text.substr(0, end));
  if (d.host.empty() || d.host == "[]") return InvalidArgument(shape);
  if (end == std::string_view::npos || end == text.size()) return d;
  std::string_view ports = text.substr(end + 1);
  const size_t comma = ports.find(',');
  const bool ok = comma == std::string_view::npos
                      ? ParsePort(ports, d.write_port)
                      : ParsePort(ports.substr(0, comma), d.write_port) &&
                            ParsePort(ports.substr(comma + 1), d.read_port);
  if (!ok) {
    return InvalidArgument("--director '" + std::string(text) +
                           "': ports must be 1-65535, as HOST:WRITE_PORT or "
                           "HOST:WRITE_PORT,READ_PORT (defaults 7300,7301)");
  }
  return d;
}

proto::SqlStatement MakeStatement(std::string sql, std::vector<proto::SqlValue> params) {
  proto::SqlStatement s;
  s.set_sql(std::move(sql));
  for (auto& p : params) *s.add_params() = std::move(p);
  return s;
}
proto::SqlValue SqlInt(int64_t v) {
  proto::SqlValue x;
  x.set_integer(v);
  return x;
}
proto::SqlValue SqlReal(double v) {
  proto::SqlValue x;
  x.set_real(v);
  return x;
}
proto::SqlValue SqlText(std::string v) {
  proto::SqlValue x;
  x.set_text(std::move(v));
  return x;
}
proto::SqlValue SqlBlob(std::string v) {
  proto::SqlValue x;
  x.set_blob(std::move(v));
  return x;
}
proto::SqlValue SqlNull() {
  proto::SqlValue x;
  x.set_null(true);
  return x;
}

std::string NewClientSender() {
  static std::atomic<uint64_t> index{0};
  static const uint64_t salt = static_cast<uint64_t>(RealClock().WallMicros()) & 0xffffff;
  return "sql-" + std::to_string(::getpid()) + "-" + std::to_string(index.fetch_add(1)) + "-" +
         std::to_string(salt);
}

// ---------------------------------------------------------------------------------------------
// WriteClient

Result<WriteClient> WriteClient::Connect(const std::string& host, uint16_t port,
                                         const proto::ClusterKey& key, Duration timeout,
                                         const Clock* clock) {
  if (timeout <= Duration::zero()) return InvalidArgument("write timeout must be positive");
  const Clock& c = clock != nullptr ? *clock : DefaultClock();
  VSC_ASSIGN_OR_RETURN(net::SockAddr target, ResolveHost(host, port));
  auto fd = ConnectTcp(target, c.Now() + timeout, c, "connect to the write port");
  if (!fd.ok()) {
    return Unavailable(fd.status().message() +
                       " (is the director running with its write port there?)");
  }
  return WriteClient(std::move(fd).value(), key, timeout, &c, FormatAddress(target));
}

WriteClient::WriteClient(UniqueFd fd, const proto::ClusterKey& key, Duration timeout,
                         const Clock* clock, std::string target)
    : fd_(std::move(fd)),
      codec_(std::make_unique<proto::EnvelopeCodec>(key)),
      counter_(std::make_unique<proto::CounterSource>(clock->WallMicros())),
      sender_(NewClientSender()),
      timeout_(timeout),
      clock_(clock),
      target_(std::move(target)) {}

WriteClient::WriteClient(WriteClient&&) noexcept = default;
WriteClient& WriteClient::operator=(WriteClient&&) noexcept = default;
WriteClient::~WriteClient() = default;

Result<uint64_t> WriteClient::Send(std::vector<proto::SqlStatement> statements,
                                   std::string idempotency_key) {
  if (statements.empty()) return InvalidArgument("a write needs at least one statement");
  proto::Message m;
  proto::WriteRequest* req = m.mutable_write_request();
  const uint64_t id = next_request_id_++;
  req->set_request_id(id);
  for (auto& s : statements) *req->add_statements() = std::move(s);
  req->set_idempotency_key(std::move(idempotency_key));
  VSC_RETURN_IF_ERROR(SendMessage(m));
  ++outstanding_;
  return id;
}

Status WriteClient::SendMessage(const proto::Message& m) {
  auto sealed = codec_->TrySeal(sender_, counter_->Next(), m);
  if (!sealed.ok()) {
    return InvalidArgument("request too large (" + std::to_string(m.ByteSizeLong()) +
                           " bytes; at most " + std::to_string(proto::kMaxBodyBytes) +
                           " in one request): split the batch, or bind smaller parameters");
  }
  std::vector<uint8_t> frame;
  proto::AppendFrame(frame, *sealed);
  const TimePoint deadline = clock_->Now() + timeout_;
  size_t off = 0;
  while (off < frame.size()) {
    const ssize_t n = ::send(fd_.get(), frame.data() + off, frame.size() - off, MSG_NOSIGNAL);
    if (n >= 0) {
      off += static_cast<size_t>(n);
      continue;
    }
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) {
      return Unavailable("write port " + target_ + ": send: " + std::strerror(errno));
    }
    // The director is not reading: its queue is full. Meanwhile take in answers, or both
    // sides could wait on each other's full buffers.
    pollfd p{fd_.get(), POLLOUT | POLLIN, 0};
    const int rc = ::poll(&p, 1, MillisLeft(deadline, *clock_));
    if (rc == 0) return Unavailable("write port " + target_ + ": send timed out");
    if (rc > 0 && (p.revents & POLLIN)) VSC_RETURN_IF_ERROR(ReadSome(false, deadline));
  }
  return Status::Ok();
}

Status WriteClient::ReadSome(bool block, TimePoint deadline) {
  std::array<uint8_t, 64 * 1024> buf;
  for (;;) {
    const ssize_t n = ::recv(fd_.get(), buf.data(), buf.size(), MSG_DONTWAIT);
    if (n > 0) {
      decoder_.Feed(std::span<const uint8_t>(buf.data(), static_cast<size_t>(n)));
      return Status::Ok();
    }
    if (n == 0)
      return Unavailable("write port " + target_ + ": the director closed the connection");
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) {
      return Unavailable("write port " + target_ + ": receive: " + std::strerror(errno));
    }
    if (!block) return Status::Ok();
    pollfd p{fd_.get(), POLLIN, 0};
    const int rc = ::poll(&p, 1, MillisLeft(deadline, *clock_));
    if (rc < 0 && errno == EINTR) continue;
    if (rc == 0) {
      return Unavailable("write port " + target_ + ": no answer within " + TimeoutText(timeout_) +
                         "; the write may or may not have been applied (check with its seq)");
    }
  }
}

Result<std::optional<proto::Message>> WriteClient::NextMessage() {
  auto frame = decoder_.Next();
  if (!frame.ok()) return DataLoss("write port " + target_ + ": " + frame.status().message());
  if (!frame->has_value()) return std::optional<proto::Message>();
  if (proto::IsAuthFailed(**frame)) {
    return Unauthenticated("write port " + target_ + ": " + proto::kAuthFailedText);
  }
  auto opened = codec_->Open(**frame);
  if (!opened.ok()) {
    return Unauthenticated("write port " + target_ + ": answer does not verify (" +
                           opened.status().message() + "); is the cluster key the director's?");
  }
  return std::optional<proto::Message>(std::move(opened->message));
}

Result<std::optional<proto::WriteResponse>> WriteClient::NextBuffered() {
  for (;;) {
    VSC_ASSIGN_OR_RETURN(auto m, NextMessage());
    if (!m) return std::optional<proto::WriteResponse>();
    if (!m->has_write_response()) continue;  // not for us (a read's page, a newer message)
    if (outstanding_ > 0) --outstanding_;
    return std::optional<proto::WriteResponse>(std::move(*m->mutable_write_response()));
  }
}

Result<proto::Message> WriteClient::ReceiveMessage() {
  const TimePoint deadline = clock_->Now() + timeout_;
  for (;;) {
    VSC_ASSIGN_OR_RETURN(auto next, NextMessage());
    if (next) return std::move(*next);
    Status read = ReadSome(true, deadline);
    if (!read.ok()) {
      // The director's auth-failed notice may have come with the close: it is the better error.
      auto buffered = NextMessage();
      if (!buffered.ok()) return buffered.status();
      if (*buffered) return std::move(**buffered);
      return read;
    }
  }
}

Result<proto::WriteResponse> WriteClient::Receive() {
  for (;;) {
    VSC_ASSIGN_OR_RETURN(proto::Message m, ReceiveMessage());
    if (!m.has_write_response()) continue;
    if (outstanding_ > 0) --outstanding_;
    return std::move(*m.mutable_write_response());
  }
}

Result<proto::ReadResponse> WriteClient::Read(const proto::SqlStatement& statement,
                                              uint64_t min_seq, const PageSink& on_page) {
  proto::Message m;
  proto::ReadRequest* req = m.mutable_read_request();
  const uint64_t id = next_request_id_++;
  req->set_request_id(id);
  *req->mutable_statement() = statement;
  req->set_min_seq(min_seq);
  VSC_RETURN_IF_ERROR(SendMessage(m));
  for (;;) {
    VSC_ASSIGN_OR_RETURN(proto::Message got, ReceiveMessage());
    if (!got.has_read_response() || got.read_response().request_id() != id) continue;
    proto::ReadResponse& page = *got.mutable_read_response();
    if (page.ok()) {
      if (Status s = on_page(page); !s.ok()) {
        fd_.Reset();  // the rest of the answer is still coming: this connection is done
        return s;
      }
    }
    if (!page.ok() || !page.more()) {
      page.clear_rows();
      return std::move(page);
    }
  }
}

Status WriteClient::ReceiveAvailable(std::vector<proto::WriteResponse>& out) {
  VSC_RETURN_IF_ERROR(ReadSome(false, clock_->Now()));
  for (;;) {
    VSC_ASSIGN_OR_RETURN(auto next, NextBuffered());
    if (!next) return Status::Ok();
    out.push_back(std::move(*next));
  }
}

Result<proto::WriteResponse> WriteClient::Execute(std::vector<proto::SqlStatement> statements,
                                                  std::string idempotency_key) {
  VSC_ASSIGN_OR_RETURN(uint64_t id, Send(std::move(statements), std::move(idempotency_key)));
  for (;;) {
    VSC_ASSIGN_OR_RETURN(proto::WriteResponse r, Receive());
    if (r.request_id() == id) return r;
  }
}

// ---------------------------------------------------------------------------------------------
// ReadClient

Result<ReadClient> ReadClient::Open(const std::string& host, uint16_t port,
                                    const proto::ClusterKey& key, Duration timeout, int retries,
                                    const Clock* clock) {
  if (timeout <= Duration::zero()) return InvalidArgument("read timeout must be positive");
  if (retries < 0) return InvalidArgument("read retries must be 0 or more");
  VSC_ASSIGN_OR_RETURN(net::SockAddr target, ResolveHost(host, port));
  VSC_ASSIGN_OR_RETURN(BoundUdpSocket socket,
                       OpenBoundUdpSocket(target.is_v6() ? AF_INET6 : AF_INET));
  const Clock* c = clock != nullptr ? clock : &DefaultClock();
  return ReadClient(std::move(socket.fd), target, key, timeout, retries, c, socket.port);
}

ReadClient::ReadClient(UniqueFd fd, net::SockAddr target, const proto::ClusterKey& key,
                       Duration timeout, int retries, const Clock* clock, uint16_t local_port)
    : fd_(std::move(fd)),
      target_(target),
      codec_(std::make_unique<proto::EnvelopeCodec>(key)),
      counter_(std::make_unique<proto::CounterSource>(clock->WallMicros())),
      sender_(NewClientSender()),
      timeout_(timeout),
      retries_(retries),
      clock_(clock),
      local_port_(local_port) {}

ReadClient::ReadClient(ReadClient&&) noexcept = default;
ReadClient& ReadClient::operator=(ReadClient&&) noexcept = default;
ReadClient::~ReadClient() = default;

Result<proto::ReadResponse> ReadClient::Query(const proto::SqlStatement& statement,
                                              uint64_t min_seq) {
  proto::Message m;
  proto::ReadRequest* req = m.mutable_read_request();
  const uint64_t id = next_request_id_++;
  req->set_request_id(id);
  *req->mutable_statement() = statement;
  req->set_min_seq(min_seq);
  auto sealed = codec_->TrySeal(sender_, counter_->Next(), m);
  if (!sealed.ok() || sealed->size() > kMaxSqlDatagram) {
    return InvalidArgument("read request too large for one datagram (" +
                           std::to_string(m.ByteSizeLong()) + " bytes; at most " +
                           std::to_string(kMaxSqlDatagram) +
                           "): shorten the statement or its "
                           "parameters");
  }
  for (int attempt = 0; attempt <= retries_; ++attempt) {
    if (attempt > 0) ++retransmissions_;
    if (::sendto(fd_.get(), sealed->data(), sealed->size(), 0, target_.get(), target_.length()) <
        0) {
      return ErrnoStatus("sendto " + FormatAddress(target_), errno);
    }
    auto answer = AwaitAnswer(id, clock_->Now() + timeout_);
    if (answer.ok() || answer.status().code() != Code::kUnavailable) return answer;
  }
  // The director drops an unauthenticated datagram without a word (answering would let anyone
  // make it send packets to a forged address), so the client can only name the likely causes.
  return Unavailable(
      "sql read: no answer from " + FormatAddress(target_) + " within " + TimeoutText(timeout_) +
      " after " + std::to_string(retries_ + 1) +
      " attempts; either the cluster key is wrong (the director drops requests it cannot "
      "authenticate, silently) or nothing serves there (is the director's SQL read port right, "
      "and a replica up?)");
}

Result<proto::ReadResponse> ReadClient::AwaitAnswer(uint64_t request_id, TimePoint deadline) {
  std::vector<uint8_t> buf(64 * 1024);
  for (;;) {
    const int ms = MillisLeft(deadline, *clock_);
    if (ms <= 0) return Unavailable("timed out");
    pollfd pfd{fd_.get(), POLLIN, 0};
    const int rc = ::poll(&pfd, 1, ms);
    if (rc < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus("poll(udp)", errno);
    }
    if (rc == 0) continue;
    // Any source: in dr mode the replica answers, not the director. The HMAC proves it is ours.
    const ssize_t got =
        ::recvfrom(fd_.get(), buf.data(), buf.size(), MSG_DONTWAIT, nullptr, nullptr);
    if (got < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR || errno == ECONNREFUSED)
        continue;
      return ErrnoStatus("recvfrom(udp)", errno);
    }
    auto opened = codec_->Open(std::span<const uint8_t>(buf.data(), static_cast<size_t>(got)));
    if (!opened.ok()) {
      ++unauthenticated_;
      continue;
    }
    if (!opened->message.has_read_response() ||
        opened->message.read_response().request_id() != request_id) {
      ++stale_answers_;
      continue;
    }
    return std::move(*opened->message.mutable_read_response());
  }
}

}  // namespace vsc::client

#include "realserver/lookup_service.h"

#include <arpa/inet.h>

#include <algorithm>
#include <asio/experimental/as_tuple.hpp>
#include <charconv>
#include <nlohmann/json.hpp>

#include "net/port_pair.h"
#include "proto/frame.h"
#include "proto/lookup_codec.h"
#include "realserver/forwarding.h"

namespace vsc::realserver {
namespace {

// Parses "1,2,3" (1 to 10 decimal ids).
Result<std::vector<uint64_t>> ParseIdList(std::string_view text) {
  std::vector<uint64_t> ids;
  while (!text.empty()) {
    size_t comma = text.find(',');
    std::string_view part = text.substr(0, comma);
    uint64_t id = 0;
    auto [p, ec] = std::from_chars(part.data(), part.data() + part.size(), id);
    if (part.empty() || ec != std::errc() || p != part.data() + part.size()) {
      return InvalidArgument("'" + std::string(part) + "' is not a resource id");
    }
    ids.push_back(id);
    if (ids.size() > proto::kMaxLookupIds) {
      return InvalidArgument("at most 10 ids per request");
    }
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
    if (text.empty()) return InvalidArgument("trailing comma in id list");
  }
  if (ids.empty()) return InvalidArgument("no id given: GET /v1/resources/ID[,ID...]");
  return ids;
}

}  // namespace

Status LookupService::Start(const asio::ip::address& address, uint16_t lookup_port,
                            uint16_t http_port) {
  net::UdpBatchOptions options;
  options.reuse_port = true;
  options.max_datagram = proto::kMaxLookupDatagram + 1;
  VSC_ASSIGN_OR_RETURN(auto pair, net::BindTcpUdpPair(io_, address, lookup_port, options));
  udp_ = std::move(pair.udp);
  tcp_ = std::move(pair.tcp);
  http_ = std::make_unique<net::HttpServer>(
      io_, asio::ip::tcp::endpoint(address, http_port),
      [this](const net::HttpRequest& r) { return HandleHttp(r); }, /*reuse_port=*/true);
  VSC_RETURN_IF_ERROR(http_->Start());
  udp_->Start(
      [this](std::span<net::Datagram> in, net::SendBatch& out) { HandleDatagrams(in, out); });
  tcp_->Start([this](asio::ip::tcp::socket s) {
    asio::co_spawn(io_, TcpSession(this, std::move(s)), asio::detached);
  });
  return Status::Ok();
}

Status LookupService::ReopenReader(const std::string& path) {
  reader_.reset();
  auto r = store::ResourceReader::Open(path);
  if (!r.ok()) return r.status().Annotate("reopening the resource database");
  reader_.emplace(std::move(r).value());
  return Status::Ok();
}

void LookupService::Stop() {
  if (udp_) udp_->Stop();
  if (tcp_) tcp_->Stop();
  if (http_) http_->Stop();
}

size_t LookupService::Answer(std::span<const uint8_t> request, std::span<uint8_t> out) {
  auto req = proto::DecodeRequest(request);
  if (!req.ok()) {
    counters_.dropped_malformed.Add();
    return 0;
  }
  uint64_t ids[proto::kMaxLookupIds];
  for (size_t i = 0; i < req->count(); ++i) ids[i] = req->id(i);
  Status s = reader_ ? reader_->Lookup(std::span<const uint64_t>(ids, req->count()), results_)
                     : Unavailable("the database is being replaced by a snapshot");
  counters_.requests.Add();
  if (!s.ok()) {
    counters_.errors.Add();
    proto::ResponseWriter w(out, req->request_id(), proto::LookupStatus::kInternal);
    return w.Finish();
  }
  proto::ResponseWriter w(out, req->request_id(), proto::LookupStatus::kOk);
  counters_.lookups.Add(results_.size());
  for (const auto& r : results_) {
    if (!r.found) counters_.not_found.Add();
    if (!w.Add(r.id, r.found, r.node).ok()) {
      counters_.errors.Add();
      proto::ResponseWriter e(out, req->request_id(), proto::LookupStatus::kInternal);
      return e.Finish();
    }
  }
  return w.Finish();
}

void LookupService::HandleDatagrams(std::span<net::Datagram> in, net::SendBatch& out) {
  const TimePoint start = clock_.Now();
  load_.Begin(static_cast<uint32_t>(in.size()));
  // Datagrams the kernel truncated never reach this handler; count them here.
  if (const uint64_t t = udp_->stats().rx_truncated; t != truncated_seen_) {
    counters_.dropped_truncated.Add(t - truncated_seen_);
    truncated_seen_ = t;
  }
  // One read snapshot for the whole receive batch: one transaction instead of one per request.
  // Never held across a wait, so writers and checkpoints are not held back.
  const bool batched = in.size() > 1 && reader_ && reader_->BeginBatch().ok();
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
    std::span<uint8_t> buf = out.Prepare(proto::kMaxResponseSize);
    size_t n = Answer(payload, buf);
    if (n > 0) out.Commit(n, reply_to);
  }
  if (batched) (void)reader_->EndBatch();
  const double micros = std::chrono::duration<double, std::micro>(clock_.Now() - start).count() /
                        static_cast<double>(in.empty() ? 1 : in.size());
  load_.End(static_cast<uint32_t>(in.size()), micros);
}

asio::awaitable<void> LookupService::TcpSession(LookupService* self, asio::ip::tcp::socket socket) {
  self->counters_.tcp_sessions.Add();
  proto::FrameDecoder decoder(proto::kMaxLookupMessage);
  std::array<uint8_t, 4096> buf;
  std::array<uint8_t, proto::kMaxResponseSize> answer;
  std::vector<uint8_t> out;
  for (;;) {
    auto [ec, n] = co_await socket.async_read_some(
        asio::buffer(buf), asio::experimental::as_tuple(asio::use_awaitable));
    if (ec) co_return;
    decoder.Feed(std::span<const uint8_t>(buf.data(), n));
    out.clear();
    for (;;) {
      auto frame = decoder.Next();
      if (!frame.ok()) {
        self->counters_.dropped_malformed.Add();
        co_return;  // an oversize frame: the stream cannot be resynchronised
      }
      if (!frame->has_value()) break;
      const TimePoint start = self->clock_.Now();
      self->load_.Begin(1);
      size_t len = self->Answer(**frame, answer);
      self->load_.End(
          1, std::chrono::duration<double, std::micro>(self->clock_.Now() - start).count());
      if (len == 0) co_return;  // malformed request: close, as HTTP servers do
      proto::AppendFrame(out, std::span<const uint8_t>(answer.data(), len));
    }
    if (!out.empty()) {
      auto [wec, written] = co_await asio::async_write(
          socket, asio::buffer(out), asio::experimental::as_tuple(asio::use_awaitable));
      (void)written;
      if (wec) co_return;
    }
  }
}

net::HttpResponse LookupService::HandleHttp(const net::HttpRequest& req) {
  using json = nlohmann::json;
  counters_.http_requests.Add();
  net::HttpResponse r;
  const std::string prefix = "/v1/resources/";
  if (req.path == "/v1/snapshot" && snapshot_handler_) return snapshot_handler_(req);
  if (req.method != "GET") {
    r.status = 405;
    r.body = json{{"error", "only GET is served here"}}.dump() + "\n";
    return r;
  }
  if (req.path == "/metrics" && metrics_) {
    r.content_type = "text/plain; version=0.0.4";
    r.body = metrics_();
    return r;
  }
  if (req.path == "/healthz") {
    r.body = "{\"ok\":true}\n";
    return r;
  }
  if (req.path.rfind(prefix, 0) != 0) {
    r.status = 404;
    r.body = json{{"error", "no such endpoint; use GET /v1/resources/ID[,ID...]"}}.dump() + "\n";
    return r;
  }
  auto ids = ParseIdList(std::string_view(req.path).substr(prefix.size()));
  if (!ids.ok()) {
    counters_.dropped_malformed.Add();
    r.status = 400;
    r.body = json{{"error", ids.status().message()}}.dump() + "\n";
    return r;
  }
  Status s = reader_ ? reader_->Lookup(*ids, results_)
                     : Unavailable("the database is being replaced by a snapshot");
  counters_.requests.Add();
  if (!s.ok()) {
    counters_.errors.Add();
    r.status = 500;
    r.body = json{{"error", s.message()}}.dump() + "\n";
    return r;
  }
  json list = json::array();
  counters_.lookups.Add(results_.size());
  for (const auto& res : results_) {
    if (!res.found) counters_.not_found.Add();
    json item{{"id", res.id}, {"found", res.found}};
    if (res.found) item["node"] = res.node;
    list.push_back(item);
  }
  r.body = json{{"resources", list}}.dump() + "\n";
  return r;
}

}  // namespace vsc::realserver

#include "director/state_sync.h"

#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "director/sync_codec.h"
#include "net/endpoint.h"

namespace vsc::director {

StateSync::StateSync(asio::io_context& io, const proto::ClusterKey& key, StateSyncOptions options,
                     std::shared_ptr<SyncOutbox> outbox, Apply apply)
    : io_(io),
      options_(std::move(options)),
      outbox_(std::move(outbox)),
      apply_(std::move(apply)),
      codec_(key),
      socket_(io),
      flush_timer_(io) {}

StateSync::~StateSync() = default;

Status StateSync::Start() {
  for (const std::string& peer : options_.peers) {
    auto ep = net::ParseUdpEndpoint(peer);
    if (!ep.ok()) return InvalidArgument("sync_peers: " + ep.status().message());
    peers_.push_back(*ep);
  }
  auto local = net::ParseUdpEndpoint(net::HostPort(options_.listen, options_.port));
  if (!local.ok()) return InvalidArgument("sync_listen: " + local.status().message());
  asio::error_code ec;
  socket_.open(local->protocol(), ec);
  if (!ec) socket_.bind(*local, ec);
  if (!ec) socket_.non_blocking(true, ec);
  if (ec) {
    return ErrnoStatus(
        "sync: bind udp " + net::ToString(*local) + " (is another director on this sync_port?)",
        ec.value());
  }
  port_ = socket_.local_endpoint().port();
  // A restarted director is a new sender: its counter starts again from 1.
  const auto start_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                            std::chrono::system_clock::now().time_since_epoch())
                            .count();
  sender_ = "sync/" + options_.listen.substr(0, 39) + ":" + std::to_string(port_) + "/" +
            std::to_string(start_ms);
  ArmReceive();
  ArmFlush();
  return {};
}

void StateSync::Stop() {
  stopped_ = true;
  asio::error_code ignored;
  socket_.close(ignored);
  flush_timer_.cancel();
}

void StateSync::ArmFlush() {
  flush_timer_.expires_after(options_.interval);
  flush_timer_.async_wait([self = shared_from_this()](const asio::error_code& ec) {
    if (ec || self->stopped_) return;
    self->Flush();
    self->ArmFlush();
  });
}

void StateSync::Flush() {
  const std::vector<SyncRecord> records = outbox_->Take();
  if (records.empty() || peers_.empty()) return;
  for (const proto::Message& m : PackSync(records)) {
    const std::vector<uint8_t> datagram = codec_.Seal(sender_, ++counter_, m);
    for (const asio::ip::udp::endpoint& peer : peers_) {
      asio::error_code ec;
      // The socket is non-blocking: a full send buffer drops the datagram (counted).
      socket_.send_to(asio::buffer(datagram), peer, 0, ec);
      if (ec) {
        ++counters_.send_errors;
        continue;
      }
      ++counters_.sent_datagrams;
      counters_.sent_bytes += datagram.size();
    }
    counters_.sent_records += static_cast<uint64_t>(m.sync_batch().records_size());
  }
}

void StateSync::ArmReceive() {
  socket_.async_receive_from(asio::buffer(buffer_), from_,
                             [self = shared_from_this()](const asio::error_code& ec, size_t n) {
                               if (self->stopped_) return;
                               if (!ec) self->OnDatagram(n);
                               self->ArmReceive();
                             });
}

void StateSync::OnDatagram(size_t n) {
  ++counters_.received_datagrams;
  counters_.received_bytes += n;
  auto opened = codec_.Open(std::span<const uint8_t>(buffer_.data(), n));
  if (!opened.ok() || !opened->message.has_sync_batch() ||
      !replay_.Accept(opened->sender, opened->counter).ok()) {
    ++counters_.refused_datagrams;
    return;
  }
  const UnpackedSync unpacked = UnpackSync(opened->message.sync_batch());
  counters_.malformed_records += unpacked.malformed;
  for (const SyncRecord& r : unpacked.records) {
    if (apply_(r)) {
      ++counters_.received_records;
    } else {
      ++counters_.ignored_records;
    }
  }
}

std::string StateSync::RenderMetrics() const {
  const StateSyncCounters& c = counters_;
  struct Family {
    const char* name;
    const char* help;
    const char* label;
    std::vector<std::pair<const char*, uint64_t>> values;
  };
  const Family families[] = {
      {"vsc_director_sync_records_total",
       "State sync records: sent to the peers, adopted from them, ignored (a service or "
       "destination not run here), malformed, dropped (the outbox was full).",
       "event",
       {{"sent", c.sent_records},
        {"adopted", c.received_records},
        {"ignored", c.ignored_records},
        {"malformed", c.malformed_records},
        {"dropped", outbox_->dropped()}}},
      {"vsc_director_sync_datagrams_total",
       "State sync datagrams: sent, send errors, received, refused (not an envelope, bad tag, "
       "replayed, not a sync batch).",
       "event",
       {{"sent", c.sent_datagrams},
        {"send_error", c.send_errors},
        {"received", c.received_datagrams},
        {"refused", c.refused_datagrams}}},
      {"vsc_director_sync_bytes_total",
       "State sync bytes on the wire (UDP payloads).",
       "direction",
       {{"sent", c.sent_bytes}, {"received", c.received_bytes}}},
  };
  std::string o;
  for (const Family& f : families) {
    o += std::string("# HELP ") + f.name + " " + f.help + "\n# TYPE " + f.name + " counter\n";
    for (const auto& [value, n] : f.values) {
      o += std::string(f.name) + "{" + f.label + "=\"" + value + "\"} " + std::to_string(n) + "\n";
    }
  }
  return o;
}

}  // namespace vsc::director

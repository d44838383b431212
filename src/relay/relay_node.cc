#include "relay/relay_node.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <future>

#include "relay/relay_worker.h"
#include "ring/id.h"
#include "ring/table_codec.h"

namespace vsc::relay {

RelayNode::RelayNode(net::WorkerPool& pool, RelayOptions options, proto::ClusterKey key,
                     const Clock& clock)
    : pool_(pool), options_(std::move(options)), key_(std::move(key)), clock_(clock) {
  view_ = MakeRingView({}, {}, options_.name);
  for (size_t i = 0; i < pool_.size(); ++i) {
    workers_.push_back(std::make_unique<RelayWorker>(*this, i, pool_.context(i)));
  }
}

RelayNode::~RelayNode() = default;

Status RelayNode::Start() {
  asio::error_code ec;
  const auto address = asio::ip::make_address(options_.listen, ec);
  if (ec) {
    return InvalidArgument("relay listen address '" + options_.listen +
                           "' is not a numeric IPv4 or IPv6 address");
  }
  uint16_t port = options_.port;
  for (auto& w : workers_) {
    VSC_RETURN_IF_ERROR(w->Listen(address, port).Annotate("relay port"));
    port = w->port();
  }
  port_ = port;
  return Status::Ok();
}

void RelayNode::Stop() {
  std::vector<std::future<void>> done;
  for (auto& w : workers_) {
    auto p = std::make_shared<std::promise<void>>();
    done.push_back(p->get_future());
    RelayWorker* worker = w.get();
    pool_.Post(worker->index(), [worker, p] {
      worker->Stop();
      p->set_value();
    });
  }
  for (auto& d : done) d.wait();
}

Status RelayNode::SetTable(std::span<const uint8_t> table) {
  auto decoded = ring::DecodeTable(table);
  if (!decoded.ok()) return decoded.status().Annotate("ring table from the director");
  RingViewPtr view;
  std::vector<Handoff> fresh;  // handoffs this table starts
  std::vector<CopyOrder> copies;
  {
    std::lock_guard lock(view_mu_);
    if (decoded->version() < view_->ring.version()) return Status::Ok();  // an older table
    std::vector<Handoff> handoffs = PlanHandoffs(*view_, *decoded, options_.name);
    for (const Handoff& h : handoffs) {
      const bool carried = std::any_of(view_->handoffs.begin(), view_->handoffs.end(),
                                       [&](const Handoff& old) { return old.state == h.state; });
      if (!carried) fresh.push_back(h);
    }
    copies = PlanCopies(view_->ring, *decoded, options_.name, options_.replicas);
    view =
        MakeRingView(std::move(decoded).value(), std::vector<uint8_t>(table.begin(), table.end()),
                     options_.name, std::move(handoffs));
    view_ = view;
  }
  spdlog::info("relay {}: ring version {}, {} member(s){}", options_.name, view->ring.version(),
               view->ring.size(), view->member() ? "" : " (this node is not one of them)");
  for (auto& w : workers_) {
    RelayWorker* worker = w.get();
    pool_.Post(worker->index(), [worker, view] { worker->SetView(view); });
  }
  RelayWorker* puller = workers_[0].get();
  for (Handoff& h : fresh) {
    spdlog::info("relay {}: pulling arc ({}, {}] from {} before serving it", options_.name,
                 ring::IdHex(h.arc.start), ring::IdHex(h.arc.end), h.from);
    asio::co_spawn(puller->io(), RelayWorker::PullArc(puller, std::move(h), view), asio::detached);
  }
  for (CopyOrder& order : copies) {
    asio::co_spawn(puller->io(), RelayWorker::RestoreCopies(puller, std::move(order), view),
                   asio::detached);
  }
  return Status::Ok();
}

RingViewPtr RelayNode::view() const {
  std::lock_guard lock(view_mu_);
  return view_;
}

size_t RelayNode::ShardOf(std::string_view group) const {
  // One worker (the bench's nodes): no hash to compute on every request.
  if (workers_.size() == 1) return 0;
  return ring::KeyId(group) % workers_.size();
}

std::string RelayNode::RenderMetrics() const {
  struct Row {
    const char* event;
    Counter RelayCounters::*counter;
  };
  static constexpr Row kRows[] = {
      {"connection", &RelayCounters::connections},
      {"connection_refused", &RelayCounters::refused_connections},
      {"publish", &RelayCounters::publishes},
      {"copy", &RelayCounters::copies},
      {"fetch", &RelayCounters::fetches},
      {"subscribe", &RelayCounters::subscribes},
      {"delivered", &RelayCounters::delivered},
      {"forwarded", &RelayCounters::forwarded},
      {"moved", &RelayCounters::moved},
      {"refused", &RelayCounters::refused},
      {"takeover", &RelayCounters::takeovers},
      {"handed_over", &RelayCounters::handed_over},
      {"restored", &RelayCounters::restored},
      {"dropped_slow", &RelayCounters::dropped_slow},
      {"peer_auth_failure", &RelayCounters::peer_auth_failures},
  };
  std::string o =
      "# HELP vsc_rs_relay_total Clip relay events.\n# TYPE vsc_rs_relay_total counter\n";
  for (const Row& row : kRows) {
    uint64_t sum = 0;
    for (const auto& w : workers_) sum += (w->counters().*row.counter).Get();
    o += std::string("vsc_rs_relay_total{event=\"") + row.event + "\"} " + std::to_string(sum) +
         "\n";
  }
  o += "# HELP vsc_rs_ring_version Version of the ring table this node routes with.\n"
       "# TYPE vsc_rs_ring_version gauge\nvsc_rs_ring_version " +
       std::to_string(view()->ring.version()) + "\n";
  return o;
}

}  // namespace vsc::relay

#include "director/ring_port.h"

#include <asio/experimental/as_tuple.hpp>
#include <map>
#include <string>

#include "net/outbox.h"
#include "relay/answers.h"
#include "relay/clip_codec.h"
#include "relay/frame_reader.h"
#include "ring/id.h"

namespace vsc::director {
namespace {

using asio::experimental::as_tuple;
using relay::Frame;
using relay::Type;

}  // namespace

// One client's connection, and its connections to the owners it reached through the
// director. Everything on the control thread.
class RingPort::Session : public std::enable_shared_from_this<Session> {
 public:
  Session(RingPort& port, asio::ip::tcp::socket socket)
      : port_(port),
        socket_(std::make_shared<asio::ip::tcp::socket>(std::move(socket))),
        outbox_(std::make_shared<net::Outbox>(socket_)) {}

  static asio::awaitable<void> Run(std::shared_ptr<Session> self);

 private:
  struct Upstream {
    std::shared_ptr<asio::ip::tcp::socket> socket;
    std::shared_ptr<net::Outbox> outbox;
  };
  void OnFrame(Frame f);
  // The connection to the owner `m`, opened on first use; its reader relays every frame back.
  Upstream& UpstreamTo(const ring::Member& m);
  static asio::awaitable<void> Relay(std::shared_ptr<Session> self, Upstream up,
                                     asio::ip::tcp::endpoint to, std::string name);
  void Send(const Frame& f) { outbox_->Push(relay::EncodeFrame(f)); }
  void Close();

  RingPort& port_;
  std::shared_ptr<asio::ip::tcp::socket> socket_;
  std::shared_ptr<net::Outbox> outbox_;
  std::map<std::string, Upstream> upstreams_;  // by owner name
  bool closed_ = false;
};

asio::awaitable<void> RingPort::Session::Run(std::shared_ptr<Session> self) {
  asio::co_spawn(self->port_.io_, net::Outbox::Run(self->outbox_), asio::detached);
  self->port_.counters_.connections.Add();
  auto on_frame = [self](Frame f) {
    self->OnFrame(std::move(f));
    return !self->closed_;
  };
  relay::ReadResult read = co_await relay::ReadFrames(*self->socket_, on_frame);
  if (read.end == relay::ReadEnd::kMalformed) {
    self->Send(relay::RefusalFrame({}, relay::Refusal::kMalformed, read.status.message()));
    self->outbox_->CloseWhenDrained();
    self->closed_ = true;
  }
  self->Close();
}

void RingPort::Session::Close() {
  closed_ = true;
  asio::error_code ignore;
  socket_->close(ignore);
  outbox_->Close();
  for (auto& [name, up] : upstreams_) {
    up.socket->close(ignore);
    up.outbox->Close();
  }
  upstreams_.clear();
}

void RingPort::Session::OnFrame(Frame f) {
  const std::shared_ptr<const ring::Ring> r = port_.router_.ring();
  if (f.type == Type::kTable) {
    port_.counters_.tables.Add();
    Send(relay::TableFrame(f.request_id, r->version(), port_.router_.table()));
    return;
  }
  const bool group_request =
      f.type == Type::kPublish || f.type == Type::kFetch || f.type == Type::kSubscribe;
  if (f.type != Type::kOwner && !group_request) {
    port_.counters_.refused.Add();
    Send(relay::RefusalFrame(
        f, relay::Refusal::kMalformed,
        "the director's ring port takes TABLE, OWNER, PUBLISH, FETCH and SUBSCRIBE"));
    return;
  }
  if (r->empty()) {
    port_.counters_.refused.Add();
    Send(
        relay::RefusalFrame(f, relay::Refusal::kUnavailable,
                            "the ring is empty: no real server with --relay is ACTIVE; start one"));
    return;
  }
  const ring::Member& owner = r->Successor(ring::KeyId(f.key));
  if (f.type == Type::kOwner) {
    port_.counters_.owners.Add();
    Send(relay::MemberFrame(Type::kOwnerReply, f.request_id, r->version(), owner));
    return;
  }
  port_.counters_.via_director.Add();
  f.version = r->version();
  UpstreamTo(owner).outbox->Push(relay::EncodeFrame(f));
}

RingPort::Session::Upstream& RingPort::Session::UpstreamTo(const ring::Member& m) {
  auto it = upstreams_.find(m.name);
  if (it != upstreams_.end() && !it->second.outbox->closed()) return it->second;
  Upstream up;
  up.socket = std::make_shared<asio::ip::tcp::socket>(port_.io_);
  up.outbox = std::make_shared<net::Outbox>(up.socket);
  asio::error_code ec;
  auto address = asio::ip::make_address(m.endpoint.host, ec);
  asio::co_spawn(
      port_.io_,
      Relay(shared_from_this(), up, asio::ip::tcp::endpoint(address, m.endpoint.port), m.name),
      asio::detached);
  return upstreams_[m.name] = up;
}

asio::awaitable<void> RingPort::Session::Relay(std::shared_ptr<Session> self, Upstream up,
                                               asio::ip::tcp::endpoint to, std::string name) {
  auto [ec] = co_await up.socket->async_connect(to, as_tuple(asio::use_awaitable));
  if (!ec) {
    asio::co_spawn(self->port_.io_, net::Outbox::Run(up.outbox), asio::detached);
    // Whole frames only: the client's stream interleaves several owners' answers. Request ids
    // stay as the client chose them.
    auto on_frame = [self](Frame f) {
      self->Send(f);
      return true;
    };
    co_await relay::ReadFrames(*up.socket, on_frame);
  }
  up.outbox->Close();
  auto it = self->upstreams_.find(name);
  if (it != self->upstreams_.end() && it->second.socket == up.socket) self->upstreams_.erase(it);
  if (!self->closed_) {
    // The client learns its streams and pending requests through this owner ended; it
    // refreshes its table and asks again.
    Frame f;
    f.type = Type::kRefused;
    f.code = static_cast<uint8_t>(relay::Refusal::kUnavailable);
    f.key = name;
    f.payload = relay::TextPayload("the director lost its connection to ring node " + name +
                                   (ec ? ": " + ec.message() : std::string()) +
                                   "; refresh the table and retry");
    self->Send(f);
  }
}

Result<std::unique_ptr<RingPort>> RingPort::Bind(asio::io_context& io,
                                                 const asio::ip::tcp::endpoint& at,
                                                 const RingRouter& router) {
  std::unique_ptr<RingPort> port(new RingPort(io, router));
  auto listener = net::TcpListener::Listen(io, at, /*reuse_port=*/false);
  if (!listener.ok()) return listener.status().Annotate("ring port");
  port->listener_ = std::move(listener).value();
  return port;
}

void RingPort::Start() {
  listener_->Start([this](asio::ip::tcp::socket socket) {
    auto s = std::make_shared<Session>(*this, std::move(socket));
    asio::co_spawn(io_, Session::Run(s), asio::detached);
  });
}

void RingPort::Stop() { listener_->Stop(); }

std::string RingPort::RenderMetrics() const {
  std::string o =
      "# HELP vsc_director_ring_requests_total Requests on the ring port, by kind.\n"
      "# TYPE vsc_director_ring_requests_total counter\n";
  auto line = [&o](const char* kind, const Counter& c) {
    o += std::string("vsc_director_ring_requests_total{kind=\"") + kind + "\"} " +
         std::to_string(c.Get()) + "\n";
  };
  line("table", counters_.tables);
  line("owner", counters_.owners);
  line("via_director", counters_.via_director);
  line("refused", counters_.refused);
  o += "# HELP vsc_director_ring_version Version of the ring the director routes with.\n"
       "# TYPE vsc_director_ring_version gauge\nvsc_director_ring_version " +
       std::to_string(router_.ring()->version()) +
       "\n"
       "# HELP vsc_director_ring_members Members of the ring.\n"
       "# TYPE vsc_director_ring_members gauge\nvsc_director_ring_members " +
       std::to_string(router_.ring()->size()) + "\n";
  return o;
}

}  // namespace vsc::director

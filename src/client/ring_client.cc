#include "client/ring_client.h"

#include <thread>

#include "net/endpoint.h"
#include "relay/answers.h"
#include "relay/clip_codec.h"
#include "ring/id.h"
#include "ring/table_codec.h"

namespace vsc::client {

using relay::Frame;
using relay::Type;

Result<RingMode> ParseRingMode(std::string_view text) {
  if (text == "prefetch") return RingMode::kPrefetch;
  if (text == "ask") return RingMode::kAsk;
  if (text == "via-director" || text == "via_director") return RingMode::kViaDirector;
  return InvalidArgument("ring mode '" + std::string(text) +
                         "' is not one of prefetch, ask, via-director");
}

std::string_view RingModeName(RingMode mode) {
  switch (mode) {
    case RingMode::kPrefetch:
      return "prefetch";
    case RingMode::kAsk:
      return "ask";
    default:
      return "via-director";
  }
}

std::string DirectorRingAddress(const RingClientOptions& o) {
  return net::HostPort(o.director_host, o.ring_port);
}

namespace {

// A refusal as a Status a person can act on.
Status RefusalStatus(const Frame& f, const std::string& where) {
  const std::string text = "refused by " + where + ": " + relay::PayloadText(f);
  switch (static_cast<relay::Refusal>(f.code)) {
    case relay::Refusal::kSubscribers:
    case relay::Refusal::kGroups:
    case relay::Refusal::kRate:
    case relay::Refusal::kConnections:
      return ResourceExhausted(text);
    case relay::Refusal::kUnavailable:
      return Unavailable(text);
    default:
      return InvalidArgument(text);
  }
}

}  // namespace

RingClient::RingClient(RingClientOptions options, const Clock& clock)
    : options_(std::move(options)), clock_(clock) {}

Result<RelayLink*> RingClient::LinkTo(const std::string& where, TimePoint deadline) {
  auto it = links_.find(where);
  if (it != links_.end() && it->second.ok()) return &it->second;
  if (it != links_.end()) links_.erase(it);
  const size_t colon = where.rfind(':');
  const std::string host = where.substr(0, colon);
  const auto port = static_cast<uint16_t>(std::stoul(where.substr(colon + 1)));
  VSC_ASSIGN_OR_RETURN(RelayLink link, RelayLink::Connect(host, port, deadline, clock_));
  return &links_.insert_or_assign(where, std::move(link)).first->second;
}

Result<std::vector<Frame>> RingClient::Exchange(const std::string& where, Frame request) {
  const TimePoint deadline = clock_.Now() + options_.timeout;
  VSC_ASSIGN_OR_RETURN(RelayLink * link, LinkTo(where, deadline));
  request.request_id = link->NextRequestId();
  auto fail = [&](Status s) {
    links_.erase(where);  // a late answer on this link would confuse the next request
    return s;
  };
  if (Status s = link->Send(request, deadline); !s.ok()) return fail(s);
  std::vector<Frame> out;
  for (;;) {
    auto f = link->Receive(deadline);
    if (!f.ok()) return fail(f.status());
    if (f->type == Type::kRefused && f->request_id == 0) {
      return fail(Unavailable("refused by " + where + ": " + relay::PayloadText(*f)));
    }
    if (f->request_id != request.request_id) continue;  // an earlier request's late answer
    const bool terminal = relay::IsTerminal(f->type);
    out.push_back(std::move(f).value());
    if (terminal) return out;
  }
}

Result<std::shared_ptr<const ring::Ring>> RingClient::RefreshTable() {
  Frame request;
  request.type = Type::kTable;
  VSC_ASSIGN_OR_RETURN(auto answer, Exchange(DirectorRingAddress(options_), request));
  const Frame& f = answer.back();
  if (f.type != Type::kTableReply) {
    return Unavailable("the director at " + DirectorRingAddress(options_) +
                       " did not send its ring table: " + relay::PayloadText(f));
  }
  VSC_ASSIGN_OR_RETURN(ring::Ring decoded, ring::DecodeTable(f.payload));
  ++stats_.table_refreshes;
  table_ = std::make_shared<const ring::Ring>(std::move(decoded));
  return table_;
}

Result<std::pair<std::string, std::string>> RingClient::AskOwner(const std::string& key) {
  Frame request;
  request.type = Type::kOwner;
  request.key = key;
  VSC_ASSIGN_OR_RETURN(auto answer, Exchange(DirectorRingAddress(options_), request));
  const Frame& f = answer.back();
  if (f.type != Type::kOwnerReply) return RefusalStatus(f, DirectorRingAddress(options_));
  return std::make_pair(f.key, relay::PayloadText(f));
}

Result<std::string> RingClient::TargetFor(const std::string& group, int attempt) {
  if (options_.mode == RingMode::kViaDirector) return DirectorRingAddress(options_);
  if (options_.mode == RingMode::kAsk && attempt == 0) {
    VSC_ASSIGN_OR_RETURN(auto owner, AskOwner(group));
    return owner.second;
  }
  if (!table_ || table_->empty()) VSC_RETURN_IF_ERROR(RefreshTable().status());
  if (table_->empty()) {
    return Unavailable(
        "the ring is empty: no relay node is active (start vsc realserver "
        "--relay)");
  }
  const std::vector<size_t> list =
      table_->SuccessorList(ring::KeyId(group), std::min<size_t>(table_->size(), 3));
  return relay::EndpointText(table_->member(list[static_cast<size_t>(attempt) % list.size()]));
}

Result<std::vector<Frame>> RingClient::Route(Frame request, std::string* where) {
  Status last = Unavailable("no try made");
  int failures = 0;
  for (int attempt = 0; attempt < options_.attempts; ++attempt) {
    // A client's retry pause, growing: a node may be a few ms behind the director's table.
    if (attempt > 0) std::this_thread::sleep_for(std::chrono::milliseconds(5 * attempt));
    auto target = TargetFor(request.key, failures);
    if (!target.ok()) {
      last = target.status();
      ++failures;
      continue;
    }
    request.version = table_ ? table_->version() : 0;
    auto answer = Exchange(*target, request);
    const bool unavailable =
        !answer.ok() || (answer->back().type == Type::kRefused &&
                         answer->back().code == static_cast<uint8_t>(relay::Refusal::kUnavailable));
    if (answer.ok() && answer->back().type == Type::kMoved) {
      ++stats_.moved;
      if (options_.mode == RingMode::kPrefetch) (void)RefreshTable();
      last = Unavailable("moved to " + answer->back().key);
      continue;
    }
    if (!unavailable) {
      if (where != nullptr) *where = *target;
      return answer;
    }
    last = answer.ok() ? RefusalStatus(answer->back(), *target) : answer.status();
    ++failures;
    ++stats_.failovers;
    if (options_.mode != RingMode::kViaDirector) (void)RefreshTable();
  }
  return Unavailable("group '" + request.key + "': no answer after " +
                     std::to_string(options_.attempts) + " tries; last: " + last.message() +
                     " (check that the director and the relay nodes run)");
}

Result<PublishAck> RingClient::Publish(const std::string& group, std::vector<uint8_t> clip) {
  Frame request;
  request.type = Type::kPublish;
  request.key = group;
  request.payload = std::move(clip);
  std::string where;
  VSC_ASSIGN_OR_RETURN(auto answer, Route(std::move(request), &where));
  const Frame& f = answer.back();
  if (f.type != Type::kAck) return RefusalStatus(f, where);
  return PublishAck{f.seq, f.hops, where};
}

Result<FetchResult> RingClient::Fetch(const std::string& group, uint64_t since) {
  Frame request;
  request.type = Type::kFetch;
  request.key = group;
  request.seq = since;
  std::string where;
  VSC_ASSIGN_OR_RETURN(auto answer, Route(std::move(request), &where));
  const Frame& done = answer.back();
  if (done.type != Type::kDone) return RefusalStatus(done, where);
  FetchResult out;
  for (size_t i = 0; i + 1 < answer.size(); ++i) {
    out.clips.push_back({answer[i].seq, std::move(answer[i].payload)});
  }
  out.last_seq = done.seq;
  if (done.code == static_cast<uint8_t>(relay::Refusal::kGone)) out.gone = relay::PayloadText(done);
  return out;
}

}  // namespace vsc::client

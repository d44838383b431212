#include "client/ring_subscription.h"

#include <thread>

namespace vsc::client {

using relay::Frame;
using relay::Type;

RingSubscription::RingSubscription(RingClient& client, std::string group, uint64_t since)
    : client_(client), group_(std::move(group)), last_(since) {}

Status RingSubscription::Open(TimePoint deadline) {
  link_.reset();
  VSC_ASSIGN_OR_RETURN(std::string where, client_.TargetFor(group_, failures_));
  const size_t colon = where.rfind(':');
  VSC_ASSIGN_OR_RETURN(
      RelayLink link, RelayLink::Connect(where.substr(0, colon),
                                         static_cast<uint16_t>(std::stoul(where.substr(colon + 1))),
                                         deadline, client_.clock()));
  Frame request;
  request.type = Type::kSubscribe;
  request.key = group_;
  request.seq = last_;
  request.version = client_.table() ? client_.table()->version() : 0;
  request.request_id = link.NextRequestId();
  VSC_RETURN_IF_ERROR(link.Send(request, deadline));
  ++stats_.subscribes;
  link_.emplace(std::move(link));
  return Status::Ok();
}

Result<std::optional<Clip>> RingSubscription::Next(TimePoint deadline) {
  const Clock& clock = client_.clock();
  while (clock.Now() < deadline) {
    if (!link_ || !link_->ok()) {
      if (Status s = Open(deadline); !s.ok()) {
        ++failures_;
        if (client_.options().mode != RingMode::kViaDirector) (void)client_.RefreshTable();
        // A client's retry pause (the director's next table comes within a heartbeat period).
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        continue;
      }
    }
    auto f = link_->Receive(deadline);
    if (!f.ok()) {
      if (link_->ok()) return std::optional<Clip>();  // the deadline passed; the link is fine
      link_.reset();
      ++failures_;
      continue;
    }
    if (f->type == Type::kClip && f->request_id == 0 && f->key == group_) {
      if (f->seq <= last_) {
        ++stats_.duplicates;
        continue;
      }
      if (last_ != 0 && f->seq != last_ + 1) ++stats_.gaps;
      last_ = f->seq;
      failures_ = 0;
      return std::optional<Clip>(Clip{f->seq, std::move(f->payload)});
    }
    if (f->type == Type::kMoved) {
      // Our table is stale, or we asked a node that does not own the group: ask the owner.
      (void)client_.RefreshTable();
      failures_ = 0;
      link_.reset();
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      continue;
    }
    if (f->type == Type::kRefused) {
      const auto why = static_cast<relay::Refusal>(f->code);
      if (why == relay::Refusal::kSubscribers || why == relay::Refusal::kMalformed) {
        return ResourceExhausted("subscribe to '" + group_ + "' refused by " + link_->where() +
                                 ": " + relay::PayloadText(*f));
      }
      link_.reset();
      ++failures_;
    }
  }
  return std::optional<Clip>();
}

}  // namespace vsc::client

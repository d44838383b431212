#include "vservice/udp_session_table.h"

#include <string>

namespace vsc::vservice {

Result<UdpSessionTable> UdpSessionTable::Create(const UdpSessionOptions& options) {
  if (options.timeout.count() <= 0) {
    return InvalidArgument("UDP session timeout must be positive (ipvsadm --set ... udp)");
  }
  if (options.max_sessions == 0) return InvalidArgument("UDP session table size must be > 0");
  return UdpSessionTable(options);
}

void UdpSessionTable::Touch(std::list<UdpSession>::iterator it, TimePoint now) {
  it->last_seen = now;
  order_.splice(order_.end(), order_, it);
}

const UdpSession* UdpSessionTable::Lookup(const AddrPort& client, TimePoint now) {
  auto it = index_.find(client);
  if (it == index_.end()) return nullptr;
  if (Expired(*it->second, now)) {
    order_.erase(it->second);
    index_.erase(it);
    return nullptr;
  }
  Touch(it->second, now);
  return &*it->second;
}

Status UdpSessionTable::Open(const AddrPort& client, const AddrPort& dest, TimePoint now) {
  if (options_.one_packet) return Status::Ok();
  if (auto it = index_.find(client); it != index_.end()) {
    if (!Expired(*it->second, now)) {
      return AlreadyExists("UDP session of " + ToString(client) + " exists already (to " +
                           ToString(it->second->dest) + "); look it up before opening one");
    }
    order_.erase(it->second);
    index_.erase(it);
  }
  if (index_.size() >= options_.max_sessions) {
    if (!Expired(order_.front(), now)) {
      return ResourceExhausted("UDP session table full: " + std::to_string(index_.size()) +
                               " live sessions; refusing new client " + ToString(client) +
                               "; raise the session limit or lower the udp timeout (--set)");
    }
    index_.erase(order_.front().client);
    order_.pop_front();
  }
  order_.push_back(UdpSession{client, dest, now});
  index_.emplace(client, std::prev(order_.end()));
  return Status::Ok();
}

bool UdpSessionTable::Refresh(const AddrPort& client, TimePoint now) {
  return Lookup(client, now) != nullptr;
}

bool UdpSessionTable::Close(const AddrPort& client) {
  auto it = index_.find(client);
  if (it == index_.end()) return false;
  order_.erase(it->second);
  index_.erase(it);
  return true;
}

size_t UdpSessionTable::CloseDest(const AddrPort& dest) {
  size_t closed = 0;
  for (auto it = order_.begin(); it != order_.end();) {
    if (it->dest == dest) {
      index_.erase(it->client);
      it = order_.erase(it);
      ++closed;
    } else {
      ++it;
    }
  }
  return closed;
}

std::vector<UdpSession> UdpSessionTable::Expire(TimePoint now) {
  std::vector<UdpSession> expired;
  while (!order_.empty() && Expired(order_.front(), now)) {
    index_.erase(order_.front().client);
    expired.push_back(std::move(order_.front()));
    order_.pop_front();
  }
  return expired;
}

Status UdpSessionTable::SetTimeout(Duration timeout) {
  if (timeout.count() <= 0) {
    return InvalidArgument("UDP session timeout must be positive (ipvsadm --set ... udp)");
  }
  options_.timeout = timeout;
  return Status::Ok();
}

}  // namespace vsc::vservice

#include "director/fronted_index.h"

namespace vsc::director {

FrontedIndex BuildFrontedIndex(const std::vector<membership::ServerRecord>& servers) {
  FrontedIndex index;
  for (const membership::ServerRecord& rec : servers) {
    if (rec.state == membership::State::kDown) continue;
    for (const membership::Endpoint& ep : rec.reg.endpoints) {
      vservice::Proto proto;
      if (ep.proto == "tcp") {
        proto = vservice::Proto::kTcp;
      } else if (ep.proto == "udp") {
        proto = vservice::Proto::kUdp;
      } else {
        continue;
      }
      auto addr = vservice::IpAddress::Parse(ep.host);
      if (!addr.ok()) continue;
      index.emplace(FrontedKey{proto, vservice::AddrPort{*addr, ep.port}}, rec.reg.id);
    }
  }
  return index;
}

}  // namespace vsc::director

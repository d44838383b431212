#include "director/lookup_view.h"

#include "director/service_view_builder.h"

namespace vsc::director {

int LookupServiceIndex(vservice::Proto proto) {
  return proto == vservice::Proto::kTcp ? kTcpService : kUdpService;
}

std::shared_ptr<ServiceView> BuildLookupView(const vservice::VirtualService& service,
                                             const std::vector<ViewServer>& candidates,
                                             const std::vector<LookupDestInputs>& inputs,
                                             uint64_t version) {
  auto view = NewServiceView(service, candidates.size(), version);
  for (size_t i = 0; i < candidates.size(); ++i) {
    const ViewServer& s = candidates[i];
    DestView d;
    d.dest = s.address;
    // The lookup protocol over UDP is answered by the real server itself (dr); over TCP the
    // director proxies the connection (nat).
    d.method =
        service.key.proto == vservice::Proto::kUdp ? vservice::Method::kDr : vservice::Method::kNat;
    d.server_id = s.id;
    d.backend = s.backend;
    d.state = inputs.at(i).state;
    if (d.backend.available && d.backend.weight == 0) d.state = "QUIESCENT";
    d.stats = inputs[i].stats;
    view->dests.push_back(std::move(d));
  }
  return view;
}

}  // namespace vsc::director

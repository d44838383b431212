#include "relay/answers.h"

#include "common/host_port.h"

namespace vsc::relay {

Frame RefusalFrame(const Frame& request, Refusal why, std::string_view text) {
  Frame f;
  f.type = Type::kRefused;
  f.code = static_cast<uint8_t>(why);
  f.request_id = request.request_id;
  f.key = request.key;
  f.payload = TextPayload(text);
  return f;
}

Frame MemberFrame(Type type, uint64_t request_id, uint64_t version, const ring::Member& m) {
  Frame f;
  f.type = type;
  f.request_id = request_id;
  f.version = version;
  f.key = m.name;
  f.payload = TextPayload(EndpointText(m));
  return f;
}

Frame TableFrame(uint64_t request_id, uint64_t version, std::vector<uint8_t> table) {
  Frame f;
  f.type = Type::kTableReply;
  f.request_id = request_id;
  f.version = version;
  f.payload = std::move(table);
  return f;
}

std::string EndpointText(const ring::Member& m) {
  return HostPort(m.endpoint.host, m.endpoint.port);
}

}  // namespace vsc::relay

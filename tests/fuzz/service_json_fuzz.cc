// Fuzzes the JSON decoder of the service table (the admin API's /v1/services bodies). Beyond
// not crashing: a document that decodes encodes to JSON that decodes back to an equal table and
// encodes identically; a single service and a single server likewise.
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "vservice/service_json.h"

using namespace vsc::vservice;
using nlohmann::json;

namespace {

constexpr TableLimits kLimits{64, 64};

void CheckTable(const json& j) {
  auto table = TableFromJson(j, kLimits);
  if (!table.ok()) return;
  const json encoded = TableToJson(*table);
  auto again = TableFromJson(json::parse(encoded.dump()), kLimits);
  if (!again.ok() || !(*again == *table) || TableToJson(*again) != encoded) std::abort();
}

void CheckService(const json& j) {
  auto service = ServiceFromJson(j, kLimits);
  if (!service.ok()) return;
  auto again = ServiceFromJson(ServiceToJson(*service), kLimits);
  if (!again.ok() || !(*again == *service)) std::abort();
}

void CheckServer(const json& j) {
  auto server = ServerFromJson(j);
  if (!server.ok()) return;
  auto again = ServerFromJson(ServerToJson(server->first, server->second));
  if (!again.ok() || again->first != server->first || !(again->second == server->second)) {
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const json j = json::parse(data, data + size, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return 0;
  CheckTable(j);
  CheckService(j);
  CheckServer(j);
  return 0;
}

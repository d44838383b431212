// Fuzzes the TOML service loader (the director's [[service]] tables and its saved running
// table). Beyond not crashing: a document that loads saves to text that loads back to an equal
// table and saves identically.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "vservice/service_toml.h"

using namespace vsc::vservice;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  constexpr TableLimits kLimits{64, 64};
  auto table = LoadServicesToml(text, "fuzz", kLimits);
  if (!table.ok()) return 0;
  const std::string saved = SaveServicesToml(*table);
  auto again = LoadServicesToml(saved, "saved", kLimits);
  if (!again.ok() || !(*again == *table) || SaveServicesToml(*again) != saved) std::abort();
  return 0;
}

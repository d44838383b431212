#include "cli/verify.h"

#include <chrono>
#include <thread>

namespace vsc::cli {

Result<nlohmann::json> AwaitVerification(const AdminPost& post, const AdminGet& get,
                                         Duration timeout) {
  VSC_ASSIGN_OR_RETURN(nlohmann::json started, post("/v1/verify", nlohmann::json::object()));
  if (!started.contains("seq") || !started["seq"].is_number_unsigned()) {
    return Internal("the director answered POST /v1/verify without a seq: " + started.dump());
  }
  const std::string target = "/v1/verify/" + std::to_string(started["seq"].get<uint64_t>());
  RealClock clock;
  const TimePoint deadline = clock.Now() + timeout;
  for (;;) {
    VSC_ASSIGN_OR_RETURN(nlohmann::json result, get(target));
    if (result.value("complete", false) || clock.Now() >= deadline) return result;
    // The admin API answers at once (it never blocks its thread), so the result is polled; the
    // replicas answer within a few heartbeat periods.
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

}  // namespace vsc::cli

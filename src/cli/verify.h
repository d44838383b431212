// The client side of `verify` (DESIGN §7), shared by `vsc adm verify` and `vsc demo`: POST
// /v1/verify sequences a checksum marker; GET /v1/verify/{seq} is polled until every replica has
// answered or the timeout passes. The transport (admin HTTP with a token) is the caller's.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "common/clock.h"
#include "common/status.h"

namespace vsc::cli {

using AdminGet = std::function<Result<nlohmann::json>(const std::string& target)>;
using AdminPost =
    std::function<Result<nlohmann::json>(const std::string& target, const nlohmann::json& body)>;

// Returns the last /v1/verify/{seq} answer: complete with ok true (every replica equal) or false
// (MISMATCH), or incomplete when the timeout passed first.
Result<nlohmann::json> AwaitVerification(const AdminPost& post, const AdminGet& get,
                                         Duration timeout);

}  // namespace vsc::cli

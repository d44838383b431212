// JSON answers of the admin API: a body, or {"error": "..."} with the HTTP status that fits
// the error's code. Shared by admin_api.cc and service_routes.cc.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "common/status.h"
#include "director/stats.h"
#include "net/http_response.h"

namespace vsc::director {

net::HttpResponse JsonResponse(int status, const nlohmann::json& body);
net::HttpResponse ErrorResponse(int status, const std::string& message);
// 400 invalid argument, 404 not found, 409 already exists / failed precondition / table full,
// 503 unavailable, 500 otherwise; the body carries the message and the code's name.
net::HttpResponse ErrorResponse(const Status& status);
int HttpStatusFor(const Status& status);
// {"conns", "in_packets", "out_packets", "in_bytes", "out_bytes"} and
// {"cps", "in_pps", "out_pps", "in_bps", "out_bps"}: the stats and rates of listings.
nlohmann::json TotalsJson(const Totals& totals);
nlohmann::json RatesJson(const Rates& rates);
// The request body as a JSON object, or InvalidArgument.
Result<nlohmann::json> ParseJsonObject(const std::string& body);

}  // namespace vsc::director

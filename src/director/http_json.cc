#include "director/http_json.h"

namespace vsc::director {

using nlohmann::json;

net::HttpResponse JsonResponse(int status, const json& body) {
  net::HttpResponse r;
  r.status = status;
  r.content_type = "application/json";
  r.body = body.dump(2) + "\n";
  return r;
}

net::HttpResponse ErrorResponse(int status, const std::string& message) {
  return JsonResponse(status, json{{"error", message}});
}

int HttpStatusFor(const Status& s) {
  switch (s.code()) {
    case Code::kNotFound:
      return 404;
    case Code::kInvalidArgument:
      return 400;
    case Code::kAlreadyExists:
    case Code::kFailedPrecondition:
    case Code::kResourceExhausted:
      return 409;
    case Code::kUnavailable:
      return 503;
    default:
      return 500;
  }
}

net::HttpResponse ErrorResponse(const Status& s) {
  return JsonResponse(HttpStatusFor(s),
                      json{{"error", s.message()}, {"code", std::string(CodeName(s.code()))}});
}

json TotalsJson(const Totals& t) {
  return {{"conns", t.conns},
          {"in_packets", t.in_packets},
          {"out_packets", t.out_packets},
          {"in_bytes", t.in_bytes},
          {"out_bytes", t.out_bytes}};
}

json RatesJson(const Rates& r) {
  return {{"cps", r.cps},
          {"in_pps", r.in_pps},
          {"out_pps", r.out_pps},
          {"in_bps", r.in_bps},
          {"out_bps", r.out_bps}};
}

Result<json> ParseJsonObject(const std::string& body) {
  json j = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return InvalidArgument("request body must be a JSON object");
  }
  return j;
}

}  // namespace vsc::director

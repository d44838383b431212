// HttpRequestSync: one blocking HTTP/1.1 request, for `vsc adm`, health checks run off the
// workers, and tests.
//
// Opens a connection, sends the request with "Connection: close" (and Content-Length when there
// is a body or the method is POST/PUT/PATCH), and reads one response (Content-Length or
// chunked or close-delimited). `timeout` bounds the whole exchange.
// Runs its own private io_context on the calling thread; safe to call from any thread that is
// not running an io_context handler that the server needs (it would wait for itself).
// Errors: kInvalidArgument for a bad host, kIo for connect/read/write failures with the errno
// text, kUnavailable when no complete response arrived in time, kDataLoss for a malformed
// response. Any HTTP status (404, 500...) is a successful result: look at response.status.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "net/http_response.h"

namespace vsc::net {

// The request's bytes as HttpRequestSync sends them ("Connection: close", Host unless given,
// Content-Length when there is a body or the method is POST/PUT/PATCH).
std::string HttpRequestText(std::string_view method, std::string_view target, std::string_view body,
                            const std::vector<std::pair<std::string, std::string>>& headers,
                            const std::string& authority);

Result<HttpResponse> HttpRequestSync(
    const std::string& host, uint16_t port, std::string_view method, std::string_view target,
    std::string_view body, const std::vector<std::pair<std::string, std::string>>& headers,
    Duration timeout);

}  // namespace vsc::net

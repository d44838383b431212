// AdminTarget and SendAdmin: how `vsc adm` reaches a director's admin API (address, token),
// shared by its named subcommands and its ipvsadm-style options.
#pragma once

#include <cstdint>
#include <string>

#include "common/clock.h"
#include "common/status.h"
#include "net/http_response.h"

namespace vsc::cli {

struct AdminTarget {
  std::string director = "127.0.0.1";
  uint16_t admin_port = 7200;
  std::string admin;  // HOST:PORT, the older spelling; wins over the two above when given
  std::string token_file;

  std::string Address() const {
    return admin.empty() ? director + ":" + std::to_string(admin_port) : admin;
  }
};

// One request with the bearer token. Any HTTP status is a result; a Status says why no
// answer came (bad address, no token, unreachable director), naming the option to fix.
// `timeout` bounds the connect and the answer.
Result<net::HttpResponse> SendAdmin(const AdminTarget& target, const std::string& method,
                                    const std::string& path, const std::string& body,
                                    Duration timeout = std::chrono::seconds(5));

// The message of a refused request: its JSON "error", else the body as sent.
std::string AnswerError(const net::HttpResponse& response);

}  // namespace vsc::cli

// HOST:PORT as configuration files, logs and URLs write it: an IPv6 address ("::1") in
// brackets ("[::1]:7000"), anything else (a dotted quad, a name, an already bracketed IPv6
// address) as is. Pure.
#pragma once

#include <cstdint>
#include <string>

namespace vsc {

std::string HostPort(const std::string& host, uint16_t port);

}  // namespace vsc

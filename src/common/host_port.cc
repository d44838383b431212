#include "common/host_port.h"

namespace vsc {

std::string HostPort(const std::string& host, uint16_t port) {
  const bool v6 = host.find(':') != std::string::npos && !host.starts_with('[');
  return (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

}  // namespace vsc

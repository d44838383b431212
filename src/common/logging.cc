#include "common/logging.h"

#include <spdlog/sinks/stdout_color_sinks.h>

namespace vsc {

Status InitLogging(std::string_view role, std::string_view level) {
  auto lvl = spdlog::level::from_str(std::string(level));
  if (lvl == spdlog::level::off && level != "off") {
    return InvalidArgument("log level '" + std::string(level) +
                           "' is not one of trace, debug, info, warn, error, off");
  }
  auto logger = spdlog::stderr_color_mt(std::string(role));
  logger->set_pattern("%Y-%m-%d %H:%M:%S.%e [%n] %l: %v");
  logger->set_level(lvl);
  spdlog::set_default_logger(logger);
  return Status::Ok();
}

}  // namespace vsc

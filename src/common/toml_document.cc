#include "common/toml_document.h"

#include <sstream>

namespace vsc {

Result<toml::table> ParseTomlDocument(std::string_view text, std::string_view origin) {
  try {
    return toml::parse(text, origin);
  } catch (const toml::parse_error& err) {
    std::ostringstream m;
    m << origin << ":" << err.source().begin.line << ": " << err.description();
    return InvalidArgument(m.str());
  }
}

}  // namespace vsc

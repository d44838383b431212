// What `vsc demo` prints: lines to stdout, flushed at once (a child's log never overtakes
// them), and section headings. Used by the main demo and its ring part.
#pragma once

#include <string>

namespace vsc::cli {

__attribute__((format(printf, 1, 2))) void Say(const char* fmt, ...);
void Heading(const std::string& title);

}  // namespace vsc::cli

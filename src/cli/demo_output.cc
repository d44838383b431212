#include "cli/demo_output.h"

#include <cstdarg>
#include <cstdio>

namespace vsc::cli {

void Say(const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  std::vprintf(fmt, args);
  va_end(args);
  std::fflush(stdout);
}

void Heading(const std::string& title) { Say("\n== %s ==\n", title.c_str()); }

}  // namespace vsc::cli

// Fuzzes SqlSplitter, which cuts what a user types into `vsc sql` into statements
// (src/client/sql_text.h). The first byte seeds the piece sizes: the text fed in pieces must
// split exactly as the text fed whole, and every statement found must split again, followed by
// a newline and ';', into itself alone (a statement never ends inside a quote or a comment).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "client/sql_text.h"

namespace {

struct Split {
  std::vector<std::string> statements;
  std::string rest;
  bool operator==(const Split&) const = default;
};

Split Run(std::string_view text, uint32_t seed, bool whole) {
  vsc::client::SqlSplitter s;
  Split out;
  size_t off = 0;
  while (off < text.size()) {
    seed = seed * 1103515245u + 12345u;
    size_t n = whole ? text.size() : 1 + (seed >> 16) % 9;
    if (n > text.size() - off) n = text.size() - off;
    s.Feed(text.substr(off, n));
    off += n;
    while (auto stmt = s.Next()) out.statements.push_back(std::move(*stmt));
  }
  const bool pending = s.pending();
  out.rest = s.TakeRest();
  if (pending != !out.rest.empty() || s.pending()) std::abort();
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  const Split whole = Run(text, data[0], true);
  if (!(Run(text, data[0], false) == whole)) std::abort();
  for (const std::string& stmt : whole.statements) {
    if (stmt.empty()) std::abort();
    const Split again = Run(stmt + "\n;", 0, true);
    if (again.statements.size() != 1 || again.statements[0] != stmt || !again.rest.empty()) {
      std::abort();
    }
    (void)vsc::client::IsReadStatement(stmt);
  }
  return 0;
}

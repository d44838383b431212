// The rqlite-compatible HTTP API's request codec (DESIGN §9a, shared/reference/rqlite_api.md §2-3):
// request bodies and query strings in, statements with bound parameters out. Pure: no I/O, no
// SQLite, no clock.
//
// Body forms: a text/plain body is one statement; anything else must be a JSON array whose
// elements are "SQL", ["SQL"], ["SQL", p1, p2...] (positional) or ["SQL", {"name": v}] (named,
// written without the ':', '@' or '$' prefix). Values: integral numbers → INTEGER, other numbers
// → REAL, true/false → 1/0, null → NULL, "x'HEX'" → BLOB, other strings → TEXT, an array of
// integers 0..255 → BLOB. Named parameters are turned into positions by ParameterSlots, which
// numbers a statement's parameters exactly as SQLite does. Empty statements produce nothing.
// Errors are the 400 texts rqlite gives ("invalid JSON body", "invalid request",
// "no statements", "unsupported type ...") or say what was wrong and what to do.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"
#include "proto/control.pb.h"

namespace vsc::director {

struct SqlBodyLimits {
  size_t max_statements = 1000;
  size_t max_params = 999;
};

// Parses a /db/execute, /db/query or /db/request body. `text_plain`: Content-Type starts with
// text/plain. InvalidArgument with the message to answer (400) otherwise.
Result<std::vector<proto::SqlStatement>> ParseSqlBody(std::string_view body, bool text_plain,
                                                      const SqlBodyLimits& limits = {});

// The parameter at each position of `sql`, as SQLite numbers them: entry i is the name of ?i+1
// with its prefix (":a", "@a", "$a"), or "" for ? and ?NNN. InvalidArgument for ?0 or ?NNN over
// `max_index`.
Result<std::vector<std::string>> ParameterSlots(std::string_view sql, size_t max_index = 999);

// The query string, decoded: keys in order of first appearance; only the first value of a
// repeated key is kept; a key without '=' has the value "".
class QueryParams {
 public:
  static QueryParams Parse(std::string_view query);
  bool Has(std::string_view key) const { return Get(key).has_value(); }
  std::optional<std::string_view> Get(std::string_view key) const;

 private:
  std::vector<std::pair<std::string, std::string>> params_;
};

// Percent-decoding of one query component ('+' is a space). Malformed escapes are kept as is.
std::string UrlDecode(std::string_view s);

// A Go duration ("300ms", "2s", "1m30s", "1.5h"), in microseconds. InvalidArgument otherwise.
Result<int64_t> ParseGoDuration(std::string_view text);

}  // namespace vsc::director

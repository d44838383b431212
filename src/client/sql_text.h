// SQL text helpers for `vsc sql`: splitting typed input into ';'-terminated statements, telling
// reads (routed to the SQL read port) from writes (the write port), and formatting values.
// Pure; no I/O. Thread-compatible.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "proto/replication.pb.h"

namespace vsc::client {

// Splits a stream of SQL text into statements at ';' outside quotes ('...', "...", `...`,
// [...]) and comments (-- to end of line, /* ... */). Feed it text in any pieces; Next()
// returns each complete statement, trimmed, without its ';'. Empty statements (";;") are
// skipped. Not understood: CREATE TRIGGER bodies with inner ';' (send those with -e).
class SqlSplitter {
 public:
  void Feed(std::string_view text);
  std::optional<std::string> Next();
  // True when text that is not only whitespace and comments waits for its ';'.
  bool pending() const;
  // What is left (an unterminated last statement), trimmed; clears it.
  std::string TakeRest();

 private:
  enum class State { kNormal, kSingle, kDouble, kBacktick, kBracket, kLineComment, kBlockComment };
  std::string buf_;
  size_t scan_ = 0;  // bytes of buf_ already classified
  State state_ = State::kNormal;
  std::vector<std::string> ready_;
  size_t next_ready_ = 0;
};

// True when the statement only reads and should go to the read port: SELECT, VALUES, EXPLAIN,
// a WITH that has no INSERT/UPDATE/DELETE/REPLACE, and PRAGMA without '='. The servers check
// again: a misrouted statement is refused there with a message, never executed wrongly.
bool IsReadStatement(std::string_view sql);

// NULL, integers, reals (shortest form that reads back equal), text as is, blobs as x'..hex..'.
std::string FormatValue(const proto::SqlValue& v);

}  // namespace vsc::client

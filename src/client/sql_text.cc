#include "client/sql_text.h"

#include <fmt/format.h>

#include <cctype>

namespace vsc::client {
namespace {

std::string Trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return std::string(s.substr(b, e - b));
}

// The words of `sql` outside quotes and comments, upper-cased; '=' is reported as a word.
std::vector<std::string> Words(std::string_view sql) {
  std::vector<std::string> words;
  size_t i = 0;
  while (i < sql.size()) {
    const char c = sql[i];
    if (c == '-' && i + 1 < sql.size() && sql[i + 1] == '-') {
      while (i < sql.size() && sql[i] != '\n') ++i;
    } else if (c == '/' && i + 1 < sql.size() && sql[i + 1] == '*') {
      size_t end = sql.find("*/", i + 2);
      i = end == std::string_view::npos ? sql.size() : end + 2;
    } else if (c == '\'' || c == '"' || c == '`' || c == '[') {
      const char close = c == '[' ? ']' : c;
      size_t end = sql.find(close, i + 1);
      i = end == std::string_view::npos ? sql.size() : end + 1;
    } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      std::string w;
      while (i < sql.size() &&
             (std::isalnum(static_cast<unsigned char>(sql[i])) || sql[i] == '_')) {
        w += static_cast<char>(std::toupper(static_cast<unsigned char>(sql[i])));
        ++i;
      }
      words.push_back(std::move(w));
    } else {
      if (c == '=') words.emplace_back("=");
      ++i;
    }
  }
  return words;
}

}  // namespace

void SqlSplitter::Feed(std::string_view text) {
  buf_.append(text);
  size_t start = 0;  // first byte of the statement being scanned
  size_t i = scan_;
  for (; i < buf_.size(); ++i) {
    const char c = buf_[i];
    const char next = i + 1 < buf_.size() ? buf_[i + 1] : '\0';
    switch (state_) {
      case State::kNormal:
        if (c == '\'') {
          state_ = State::kSingle;
        } else if (c == '"') {
          state_ = State::kDouble;
        } else if (c == '`') {
          state_ = State::kBacktick;
        } else if (c == '[') {
          state_ = State::kBracket;
        } else if (c == '-' && next == '-') {
          state_ = State::kLineComment;
          ++i;
        } else if (c == '/' && next == '*') {
          state_ = State::kBlockComment;
          ++i;
        } else if (c == '-' || c == '/') {
          // A lone '-' or '/' at the end may start a comment once more text arrives.
          if (i + 1 == buf_.size()) goto out;
        } else if (c == ';') {
          std::string stmt = Trim(std::string_view(buf_).substr(start, i - start));
          if (!Words(stmt).empty()) ready_.push_back(std::move(stmt));  // not only comments
          start = i + 1;
        }
        break;
      case State::kSingle:
        if (c == '\'') state_ = State::kNormal;  // '' re-enters at once: same effect
        break;
      case State::kDouble:
        if (c == '"') state_ = State::kNormal;
        break;
      case State::kBacktick:
        if (c == '`') state_ = State::kNormal;
        break;
      case State::kBracket:
        if (c == ']') state_ = State::kNormal;
        break;
      case State::kLineComment:
        if (c == '\n') state_ = State::kNormal;
        break;
      case State::kBlockComment:
        if (c == '*' && next == '/') {
          state_ = State::kNormal;
          ++i;
        } else if (c == '*' && i + 1 == buf_.size()) {
          goto out;  // the '/' may come with the next piece
        }
        break;
    }
  }
out:
  buf_.erase(0, start);
  scan_ = i - start;
}

std::optional<std::string> SqlSplitter::Next() {
  if (next_ready_ == ready_.size()) {
    ready_.clear();
    next_ready_ = 0;
    return std::nullopt;
  }
  return std::move(ready_[next_ready_++]);
}

bool SqlSplitter::pending() const { return !Words(buf_).empty(); }

std::string SqlSplitter::TakeRest() {
  std::string rest = Words(buf_).empty() ? std::string() : Trim(buf_);
  buf_.clear();
  scan_ = 0;
  state_ = State::kNormal;
  return rest;
}

bool IsReadStatement(std::string_view sql) {
  const std::vector<std::string> w = Words(sql);
  if (w.empty()) return false;
  const std::string& first = w.front();
  if (first == "SELECT" || first == "VALUES" || first == "EXPLAIN") return true;
  if (first == "WITH") {
    for (const auto& x : w) {
      if (x == "INSERT" || x == "UPDATE" || x == "DELETE" || x == "REPLACE") return false;
    }
    return true;
  }
  if (first == "PRAGMA") {
    for (const auto& x : w) {
      if (x == "=") return false;
    }
    return true;
  }
  return false;
}

std::string FormatValue(const proto::SqlValue& v) {
  switch (v.value_case()) {
    case proto::SqlValue::kInteger:
      return std::to_string(v.integer());
    case proto::SqlValue::kReal: {
      std::string s = fmt::format("{}", v.real());
      // SQLite shows reals with a decimal point, so 2.0 does not read as the integer 2.
      if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
      return s;
    }
    case proto::SqlValue::kText:
      return v.text();
    case proto::SqlValue::kBlob: {
      static const char* kHex = "0123456789abcdef";
      std::string s = "x'";
      for (unsigned char c : v.blob()) {
        s += kHex[c >> 4];
        s += kHex[c & 15];
      }
      return s + "'";
    }
    case proto::SqlValue::kNull:
    case proto::SqlValue::VALUE_NOT_SET:
      break;
  }
  return "NULL";
}

}  // namespace vsc::client

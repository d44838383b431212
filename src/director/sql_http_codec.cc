#include "director/sql_http_codec.h"

#include <cctype>
#include <charconv>
#include <map>
#include <nlohmann/json.hpp>

namespace vsc::director {
namespace {

using nlohmann::json;

// Deeper JSON than this is no statement list; refused before parsing (bounded stack).
constexpr int kMaxJsonDepth = 32;

bool TooDeep(std::string_view body) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < body.size(); ++i) {
    const char c = body[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth) return true;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return false;
}

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// "x'0A1b'" (after trimming spaces) → the bytes; nullopt when the string is not of that form.
std::optional<std::string> ParseHexLiteral(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  if (s.size() < 3 || (s[0] != 'x' && s[0] != 'X') || s[1] != '\'' || s.back() != '\'') {
    return std::nullopt;
  }
  s = s.substr(2, s.size() - 3);
  if (s.size() % 2 != 0) return std::nullopt;
  std::string out;
  out.reserve(s.size() / 2);
  for (size_t i = 0; i < s.size(); i += 2) {
    const int hi = HexDigit(s[i]), lo = HexDigit(s[i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out.push_back(static_cast<char>(hi * 16 + lo));
  }
  return out;
}

Result<proto::SqlValue> ToValue(const json& v) {
  proto::SqlValue out;
  switch (v.type()) {
    case json::value_t::null:
      out.set_null(true);
      return out;
    case json::value_t::boolean:
      out.set_integer(v.get<bool>() ? 1 : 0);
      return out;
    case json::value_t::number_integer:
      out.set_integer(v.get<int64_t>());
      return out;
    case json::value_t::number_unsigned: {
      const uint64_t u = v.get<uint64_t>();
      if (u <= static_cast<uint64_t>(INT64_MAX)) {
        out.set_integer(static_cast<int64_t>(u));
      } else {
        out.set_real(static_cast<double>(u));
      }
      return out;
    }
    case json::value_t::number_float:
      out.set_real(v.get<double>());
      return out;
    case json::value_t::string: {
      const std::string& s = v.get_ref<const std::string&>();
      if (auto blob = ParseHexLiteral(s)) {
        out.set_blob(std::move(*blob));
      } else {
        out.set_text(s);
      }
      return out;
    }
    case json::value_t::array: {
      std::string blob;
      blob.reserve(v.size());
      for (const json& b : v) {
        if (!b.is_number_integer() || b.get<int64_t>() < 0 || b.get<int64_t>() > 255) {
          return InvalidArgument(
              "unsupported type: an array parameter must hold byte values 0..255 (a BLOB)");
        }
        blob.push_back(static_cast<char>(b.get<int64_t>()));
      }
      out.set_blob(std::move(blob));
      return out;
    }
    default:
      return InvalidArgument("unsupported type: " + std::string(v.type_name()) +
                             " parameter; use a number, string, boolean, null or byte array");
  }
}

Status BindNamed(const json& names, const std::string& sql, const SqlBodyLimits& limits,
                 proto::SqlStatement& out) {
  VSC_ASSIGN_OR_RETURN(std::vector<std::string> slots, ParameterSlots(sql, limits.max_params));
  std::map<std::string, const json*, std::less<>> given;
  for (const auto& [k, v] : names.items()) given[k] = &v;
  std::map<std::string, bool, std::less<>> used;
  for (size_t i = 0; i < slots.size(); ++i) {
    if (slots[i].empty()) {
      return InvalidArgument("parameter ?" + std::to_string(i + 1) +
                             " is positional but named parameters were given; pass a list");
    }
    auto it = given.find(std::string_view(slots[i]).substr(1));
    if (it == given.end()) {
      return InvalidArgument("no value for parameter " + slots[i] + "; add \"" +
                             slots[i].substr(1) + "\" to the parameter object");
    }
    used[it->first] = true;
    VSC_ASSIGN_OR_RETURN(*out.add_params(), ToValue(*it->second));
  }
  for (const auto& [name, v] : given) {
    if (!used.count(name)) {
      return InvalidArgument("unknown parameter \"" + name + "\": the statement has no :" + name +
                             ", @" + name + " or $" + name);
    }
  }
  return Status::Ok();
}

// One element of the body array; nullopt for an empty statement (skipped, as rqlite does).
Result<std::optional<proto::SqlStatement>> ParseElement(const json& e,
                                                        const SqlBodyLimits& limits) {
  proto::SqlStatement st;
  if (e.is_string()) {
    st.set_sql(e.get<std::string>());
  } else if (e.is_array() && !e.empty() && e[0].is_string()) {
    st.set_sql(e[0].get<std::string>());
    if (e.size() == 2 && e[1].is_object()) {
      VSC_RETURN_IF_ERROR(BindNamed(e[1], st.sql(), limits, st));
    } else {
      if (e.size() - 1 > limits.max_params) {
        return InvalidArgument("too many parameters (" + std::to_string(e.size() - 1) +
                               "); at most " + std::to_string(limits.max_params));
      }
      for (size_t i = 1; i < e.size(); ++i) {
        VSC_ASSIGN_OR_RETURN(*st.add_params(), ToValue(e[i]));
      }
    }
  } else {
    return InvalidArgument("invalid request");
  }
  if (st.sql().empty()) return std::optional<proto::SqlStatement>();
  return std::optional<proto::SqlStatement>(std::move(st));
}

bool IsIdChar(unsigned char c) { return std::isalnum(c) || c == '_' || c == '$' || c >= 0x80; }

// Length of the quoted token / comment at s[i] (s[i] is its opening), or 0 when none starts.
size_t SkipNonCode(std::string_view s, size_t i) {
  const char c = s[i];
  auto until = [&](std::string_view end, size_t from) {
    size_t at = s.find(end, from);
    return at == std::string_view::npos ? s.size() - i : at + end.size() - i;
  };
  if (c == '\'' || c == '"' || c == '`') {
    size_t j = i + 1;
    while (j < s.size()) {
      if (s[j] == c) {
        if (j + 1 < s.size() && s[j + 1] == c) {
          j += 2;  // doubled quote
          continue;
        }
        return j + 1 - i;
      }
      ++j;
    }
    return s.size() - i;
  }
  if (c == '[') return until("]", i + 1);
  if (c == '-' && i + 1 < s.size() && s[i + 1] == '-') return until("\n", i + 2);
  if (c == '/' && i + 1 < s.size() && s[i + 1] == '*') return until("*/", i + 2);
  return 0;
}

}  // namespace

Result<std::vector<std::string>> ParameterSlots(std::string_view sql, size_t max_index) {
  std::vector<std::string> slots;
  std::map<std::string, size_t, std::less<>> named;
  auto set = [&](size_t index, std::string name) -> Status {
    if (index == 0 || index > max_index) {
      return InvalidArgument("parameter index " + std::to_string(index) + " out of range 1.." +
                             std::to_string(max_index));
    }
    if (slots.size() < index) slots.resize(index);
    if (!name.empty()) slots[index - 1] = std::move(name);
    return Status::Ok();
  };
  size_t i = 0;
  while (i < sql.size()) {
    if (size_t skip = SkipNonCode(sql, i); skip > 0) {
      i += skip;
      continue;
    }
    const char c = sql[i];
    if (c == '?') {
      size_t j = i + 1;
      while (j < sql.size() && std::isdigit(static_cast<unsigned char>(sql[j]))) ++j;
      size_t index = slots.size() + 1;
      if (j > i + 1) {
        index = 0;
        auto [p, ec] = std::from_chars(sql.data() + i + 1, sql.data() + j, index);
        if (ec != std::errc()) index = max_index + 1;
      }
      VSC_RETURN_IF_ERROR(set(index, ""));
      i = j;
    } else if ((c == ':' || c == '@' || c == '$') && i + 1 < sql.size() &&
               IsIdChar(static_cast<unsigned char>(sql[i + 1]))) {
      size_t j = i + 1;
      while (j < sql.size() && IsIdChar(static_cast<unsigned char>(sql[j]))) ++j;
      std::string name(sql.substr(i, j - i));
      if (!named.count(name)) {
        named[name] = slots.size() + 1;
        VSC_RETURN_IF_ERROR(set(slots.size() + 1, name));
      }
      i = j;
    } else if (IsIdChar(static_cast<unsigned char>(c))) {
      while (i < sql.size() && IsIdChar(static_cast<unsigned char>(sql[i]))) ++i;  // x$y is a word
    } else {
      ++i;
    }
  }
  return slots;
}

Result<std::vector<proto::SqlStatement>> ParseSqlBody(std::string_view body, bool text_plain,
                                                      const SqlBodyLimits& limits) {
  std::vector<proto::SqlStatement> out;
  if (text_plain) {
    if (body.empty()) return InvalidArgument("no statements");
    proto::SqlStatement st;
    st.set_sql(std::string(body));
    out.push_back(std::move(st));
    return out;
  }
  if (TooDeep(body)) return InvalidArgument("invalid JSON body");
  const json doc = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return InvalidArgument("invalid JSON body");
  if (!doc.is_array()) return InvalidArgument("invalid request");
  if (doc.empty()) return InvalidArgument("no statements");
  if (doc.size() > limits.max_statements) {
    return InvalidArgument("too many statements (" + std::to_string(doc.size()) + "); at most " +
                           std::to_string(limits.max_statements) + " per request: split the batch");
  }
  for (const json& e : doc) {
    VSC_ASSIGN_OR_RETURN(auto st, ParseElement(e, limits));
    if (st) out.push_back(std::move(*st));
  }
  return out;
}

QueryParams QueryParams::Parse(std::string_view query) {
  QueryParams q;
  while (!query.empty()) {
    size_t amp = query.find('&');
    std::string_view part = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    if (part.empty()) continue;
    size_t eq = part.find('=');
    std::string key = UrlDecode(part.substr(0, eq));
    std::string value = eq == std::string_view::npos ? "" : UrlDecode(part.substr(eq + 1));
    if (!q.Get(key)) q.params_.emplace_back(std::move(key), std::move(value));
  }
  return q;
}

std::optional<std::string_view> QueryParams::Get(std::string_view key) const {
  for (const auto& [k, v] : params_) {
    if (k == key) return std::string_view(v);
  }
  return std::nullopt;
}

std::string UrlDecode(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '+') {
      out.push_back(' ');
    } else if (s[i] == '%' && i + 2 < s.size() && HexDigit(s[i + 1]) >= 0 &&
               HexDigit(s[i + 2]) >= 0) {
      out.push_back(static_cast<char>(HexDigit(s[i + 1]) * 16 + HexDigit(s[i + 2])));
      i += 2;
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

Result<int64_t> ParseGoDuration(std::string_view text) {
  static const std::pair<std::string_view, double> kUnits[] = {
      {"ns", 1e-3}, {"us", 1}, {"µs", 1}, {"ms", 1e3}, {"s", 1e6}, {"m", 60e6}, {"h", 3600e6}};
  auto bad = [&] {
    return InvalidArgument("'" + std::string(text) + "' is not a valid duration; write e.g. 2s");
  };
  std::string_view s = text;
  if (s == "0") return int64_t{0};
  if (s.empty()) return bad();
  double total = 0;
  while (!s.empty()) {
    size_t n = 0;
    while (n < s.size() && (std::isdigit(static_cast<unsigned char>(s[n])) || s[n] == '.')) ++n;
    if (n == 0) return bad();
    double value = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + n, value);
    if (ec != std::errc() || p != s.data() + n) return bad();
    s.remove_prefix(n);
    bool matched = false;
    for (const auto& [unit, micros] : kUnits) {
      // Two-letter units come first in the table, so "ms" is never read as "m" then "s".
      if (s.substr(0, unit.size()) == unit) {
        total += value * micros;
        s.remove_prefix(unit.size());
        matched = true;
        break;
      }
    }
    if (!matched) return bad();
  }
  if (total > 9.2e18) return bad();
  return static_cast<int64_t>(total);
}

}  // namespace vsc::director

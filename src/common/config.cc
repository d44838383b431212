#include "common/config.h"

#include <toml++/toml.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <limits>
#include <sstream>

#include "common/duration_text.h"
#include "common/file_text.h"
#include "common/toml_document.h"

namespace vsc {
namespace {

std::string FlagName(const std::string& key) {
  std::string f = "--";
  for (char c : key) f += (c == '_') ? '-' : c;
  return f;
}

template <typename Int>
Status ParseInt(const std::string& text, Int* out, std::string_view what) {
  int64_t v = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || p != text.data() + text.size()) {
    return InvalidArgument(std::string(what) + ": '" + text + "' is not an integer");
  }
  if (v < static_cast<int64_t>(std::numeric_limits<Int>::min()) ||
      (v > 0 &&
       static_cast<uint64_t>(v) > static_cast<uint64_t>(std::numeric_limits<Int>::max()))) {
    return InvalidArgument(std::string(what) + ": " + text + " is out of range");
  }
  *out = static_cast<Int>(v);
  return Status::Ok();
}

// A TOML basic string. Control characters must be escaped there (a raw newline or DEL makes
// the file unreadable), so --print-config output always loads back.
std::string TomlQuote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else if (u < 0x20 || u == 0x7f) {
      char esc[8];
      std::snprintf(esc, sizeof(esc), "\\u%04x", u);
      out += esc;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

// The shortest text that reads back as exactly `v` ("0.1", "1e+300", "inf", "nan"); the
// stream default of 6 significant digits silently rounded configured values. A whole number
// gets ".0" ("2.0", "9223372036854775808.0"): without it TOML reads an integer, and one past
// int64 does not load at all.
std::string DoubleText(double v) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  if (ec != std::errc()) return "nan";
  std::string text(buf, end);
  if (text.find_first_not_of("-0123456789") == std::string::npos) text += ".0";
  return text;
}

// A list key's TOML value: an array of strings (a single string is taken as a list of one).
Status SetList(std::vector<std::string>& out, const toml::node& node, const std::string& what) {
  std::vector<std::string> values;
  if (node.is_string()) {
    values.push_back(*node.value<std::string>());
  } else if (const toml::array* array = node.as_array()) {
    for (const toml::node& item : *array) {
      if (!item.is_string()) return InvalidArgument(what + ": every item must be a string");
      values.push_back(*item.value<std::string>());
    }
  } else {
    return InvalidArgument(what + " must be an array of strings");
  }
  out = std::move(values);
  return Status::Ok();
}

}  // namespace

std::optional<bool> ParseBoolText(std::string_view text) {
  if (text.empty() || text == "true" || text == "1" || text == "yes" || text == "on") return true;
  if (text == "false" || text == "0" || text == "no" || text == "off") return false;
  return std::nullopt;
}

ConfigTable::Entry* ConfigTable::Find(std::string_view key) {
  for (auto& e : entries_) {
    if (e.key == key) return &e;
  }
  return nullptr;
}

namespace {

// What --help shows for a value of each type.
const char* TypeName(const ConfigTable::Target& t) {
  return std::visit(
      [](auto* p) -> const char* {
        using T = std::remove_pointer_t<decltype(p)>;
        if constexpr (std::is_same_v<T, std::string>) return "TEXT";
        if constexpr (std::is_same_v<T, std::vector<std::string>>) return "TEXT ...";
        if constexpr (std::is_same_v<T, bool>) return "[BOOL]";
        if constexpr (std::is_same_v<T, double>) return "NUMBER";
        if constexpr (std::is_same_v<T, int64_t>) return "INT";
        return "UINT";
      },
      t);
}

std::string ValueText(const ConfigTable::Target& t) {
  return std::visit(
      [](auto* p) -> std::string {
        using T = std::remove_pointer_t<decltype(p)>;
        if constexpr (std::is_same_v<T, std::string>) {
          return p->empty() ? "\"\"" : *p;
        } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
          std::string text;
          for (const std::string& v : *p) text += (text.empty() ? "" : " ") + v;
          return text.empty() ? "none" : text;
        } else if constexpr (std::is_same_v<T, bool>) {
          return *p ? "true" : "false";
        } else {
          std::ostringstream o;
          o << *p;
          return o.str();
        }
      },
      t);
}

}  // namespace

void ConfigTable::AddFlags(CLI::App& app) {
  app.add_option("--config", config_path_, "TOML configuration file (keys as in --print-config)")
      ->type_name("FILE");
  app.add_flag("--print-config", print_config_, "print the effective configuration and exit");
  for (auto& e : entries_) {
    DurationUnit unit;
    std::string type = TypeName(e.target);
    if (DurationUnitOfName(e.key, &unit)) {
      type = unit == DurationUnit::kMillis ? "MS" : "SECONDS";
    }
    if (std::holds_alternative<std::vector<std::string>*>(e.target)) {
      e.option = app.add_option(FlagName(e.key), e.flag_values, e.help + " (repeatable)")
                     ->type_name("TEXT")
                     ->expected(1)
                     ->take_all();
      continue;
    }
    e.option = app.add_option(FlagName(e.key), e.flag_value, e.help);
    if (std::holds_alternative<bool*>(e.target)) {
      // A boolean may stand alone (`--insecure`) or take a value (`--insecure false`). CLI11
      // gives a bare option its default string as value, so the default is shown in the type
      // (same "TYPE=DEFAULT" look as the others) and the default string stays empty.
      e.option->expected(0, 1)->type_name(type + "=" + ValueText(e.target));
    } else {
      e.option->type_name(type)->default_str(ValueText(e.target));
    }
  }
}

Status ConfigTable::SetFromText(Entry& e, const std::string& text, std::string_view origin) {
  std::string what = std::string(origin) + " " + e.key;
  return std::visit(
      [&](auto* p) -> Status {
        using T = std::remove_pointer_t<decltype(p)>;
        if constexpr (std::is_same_v<T, std::string>) {
          *p = text;
          return Status::Ok();
        } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
          return InvalidArgument(what + " is a list: give it as an array of strings");
        } else if constexpr (std::is_same_v<T, bool>) {
          std::optional<bool> b = ParseBoolText(text);
          if (!b) return InvalidArgument(what + ": '" + text + "' is not true or false");
          *p = *b;
          return Status::Ok();
        } else if constexpr (std::is_same_v<T, double>) {
          try {
            size_t used = 0;
            double v = std::stod(text, &used);
            if (used != text.size()) throw std::invalid_argument("trailing");
            *p = v;
          } catch (const std::exception&) {
            return InvalidArgument(what + ": '" + text + "' is not a number");
          }
          return Status::Ok();
        } else {
          DurationUnit unit;
          if (DurationUnitOfName(e.key, &unit) && !text.empty() &&
              std::isalpha(static_cast<unsigned char>(text.back()))) {
            auto d = ParseDuration(text, unit);
            if (!d.ok()) return InvalidArgument(what + ": " + d.status().message());
            return ParseInt(std::to_string(*d), p, what);
          }
          return ParseInt(text, p, what);
        }
      },
      e.target);
}

Status ConfigTable::LoadTomlText(std::string_view text, std::string_view origin) {
  VSC_ASSIGN_OR_RETURN(toml::table root, ParseTomlDocument(text, origin));
  auto apply = [&](const std::string& key, const toml::node& node) -> Status {
    Entry* e = Find(key);
    if (e == nullptr) {
      return InvalidArgument(std::string(origin) + ": unknown key '" + key +
                             "' (see --print-config for the valid keys)");
    }
    if (auto* list = std::get_if<std::vector<std::string>*>(&e->target)) {
      return SetList(**list, node, std::string(origin) + " " + key);
    }
    std::string value;
    if (auto s = node.value<std::string>(); s && node.is_string()) {
      value = *s;
    } else if (node.is_boolean()) {
      value = *node.value<bool>() ? "true" : "false";
    } else if (node.is_integer()) {
      value = std::to_string(*node.value<int64_t>());
    } else if (node.is_floating_point()) {
      value = DoubleText(*node.value<double>());
    } else {
      return InvalidArgument(std::string(origin) + ": key '" + key + "' must be a scalar");
    }
    return SetFromText(*e, value, origin);
  };
  // Keys may be top-level or under [section]. Both places are read: with a [section] present,
  // top-level keys were once skipped silently (found by config_fuzz). Other tables are left to
  // other loaders only when a [section] is present, as before.
  const toml::table* sec = root[section_].as_table();
  std::vector<std::string> seen;
  const toml::table* root_table = &root;
  for (const toml::table* table : {root_table, sec}) {
    if (table == nullptr) continue;
    for (auto&& [k, node] : *table) {
      std::string key(k.str());
      const bool is_table = node.is_table() || node.is_array_of_tables();
      const bool ignored =
          std::find(ignored_tables_.begin(), ignored_tables_.end(), key) != ignored_tables_.end();
      if (table == root_table && is_table && (sec != nullptr || ignored)) {
        continue;  // [section] itself, another daemon's tables, or another loader's
      }
      if (std::find(seen.begin(), seen.end(), key) != seen.end()) {
        return InvalidArgument(std::string(origin) + ": key '" + key +
                               "' is set both at the top level and under [" + section_ +
                               "]; keep one");
      }
      seen.push_back(key);
      VSC_RETURN_IF_ERROR(apply(key, node));
    }
  }
  return Status::Ok();
}

Status ConfigTable::Finish() {
  if (!config_path_.empty()) {
    auto text = ReadFileText(config_path_);
    if (!text.ok()) return IoError("config file: " + text.status().message());
    VSC_RETURN_IF_ERROR(LoadTomlText(*text, config_path_));
  }
  for (auto& e : entries_) {
    if (e.option == nullptr || e.option->count() == 0) continue;
    if (auto* list = std::get_if<std::vector<std::string>*>(&e.target)) {
      **list = e.flag_values;
    } else {
      VSC_RETURN_IF_ERROR(SetFromText(e, e.flag_value, "flag"));
    }
  }
  return Status::Ok();
}

std::string ConfigTable::ToToml() const {
  std::ostringstream o;
  o << "[" << section_ << "]\n";
  for (const auto& e : entries_) {
    o << "# " << e.help << "\n" << e.key << " = ";
    std::visit(
        [&](auto* p) {
          using T = std::remove_pointer_t<decltype(p)>;
          if constexpr (std::is_same_v<T, std::string>) {
            o << TomlQuote(*p);
          } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
            o << "[";
            for (size_t i = 0; i < p->size(); ++i) o << (i ? ", " : "") << TomlQuote((*p)[i]);
            o << "]";
          } else if constexpr (std::is_same_v<T, bool>) {
            o << (*p ? "true" : "false");
          } else if constexpr (std::is_same_v<T, double>) {
            o << DoubleText(*p);
          } else {
            o << *p;
          }
        },
        e.target);
    o << "\n";
  }
  return o.str();
}

}  // namespace vsc

#include "client/sql_params.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <optional>

#include "client/sql_client.h"
#include "common/utf8.h"

namespace vsc::client {
namespace {

std::optional<int64_t> AsInteger(std::string_view s) {
  int64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<double> AsReal(std::string_view s) {
  if (s.empty() || std::isspace(static_cast<unsigned char>(s.front()))) return std::nullopt;
  const std::string copy(s);
  char* end = nullptr;
  const double v = std::strtod(copy.c_str(), &end);
  // Only plain decimal numbers: strtod also takes "inf", "nan" and hex floats.
  if (end != copy.c_str() + copy.size() || !std::isfinite(v) ||
      copy.find_first_not_of("0123456789+-.eE") != std::string::npos) {
    return std::nullopt;
  }
  return v;
}

std::optional<std::string> FromHex(std::string_view s) {
  if (s.size() % 2 != 0) return std::nullopt;
  std::string out;
  out.reserve(s.size() / 2);
  for (size_t i = 0; i < s.size(); i += 2) {
    unsigned v = 0;
    auto [p, ec] = std::from_chars(s.data() + i, s.data() + i + 2, v, 16);
    if (ec != std::errc() || p != s.data() + i + 2) return std::nullopt;
    out.push_back(static_cast<char>(v));
  }
  return out;
}

Result<proto::SqlValue> Text(std::string_view arg, std::string_view text) {
  if (!IsValidUtf8(text)) {
    return InvalidArgument("--param '" + std::string(arg) +
                           "': text is not valid UTF-8; put the bytes in a file and pass "
                           "@FILE (a BLOB), or write them as hex:HEX");
  }
  return SqlText(std::string(text));
}

Result<proto::SqlValue> Typed(std::string_view arg, std::string_view type, std::string_view v) {
  if (type == "text") return Text(arg, v);
  if (type == "int") {
    if (auto i = AsInteger(v)) return SqlInt(*i);
    return InvalidArgument("--param '" + std::string(arg) +
                           "': not an integer (digits with an optional '-', within 64 bits)");
  }
  if (type == "real") {
    if (auto i = AsInteger(v)) return SqlReal(static_cast<double>(*i));
    if (auto d = AsReal(v)) return SqlReal(*d);
    return InvalidArgument("--param '" + std::string(arg) + "': not a finite decimal number");
  }
  if (auto b = FromHex(v)) return SqlBlob(std::move(*b));
  return InvalidArgument("--param '" + std::string(arg) +
                         "': hex: needs an even number of hex digits (hex:00ff)");
}

}  // namespace

Result<proto::SqlValue> ParseParam(std::string_view arg, const FileReader& read_file) {
  if (arg == "null") return SqlNull();
  if (arg.rfind("@@", 0) == 0) return Text(arg, arg.substr(1));
  if (arg.rfind('@', 0) == 0) {
    if (arg.size() == 1) {
      return InvalidArgument(
          "--param '@': name the file after '@' (@data.bin); for the text "
          "\"@\" write @@ or text:@");
    }
    auto bytes = read_file(std::string(arg.substr(1)));
    if (!bytes.ok()) return bytes.status();
    return SqlBlob(std::move(bytes).value());
  }
  for (std::string_view type : {"int", "real", "text", "hex"}) {
    if (arg.size() > type.size() && arg.substr(0, type.size()) == type && arg[type.size()] == ':') {
      return Typed(arg, type, arg.substr(type.size() + 1));
    }
  }
  if (auto i = AsInteger(arg)) return SqlInt(*i);
  if (auto d = AsReal(arg)) return SqlReal(*d);
  return Text(arg, arg);
}

FileReader DiskFileReader(size_t max_bytes) {
  return [max_bytes](const std::string& path) -> Result<std::string> {
    std::ifstream in(path, std::ios::binary);
    if (!in) return NotFound("--param @" + path + ": cannot open the file");
    in.seekg(0, std::ios::end);
    const std::streamoff size = in.tellg();
    if (size < 0) return IoError("--param @" + path + ": cannot read the file");
    if (static_cast<uint64_t>(size) > max_bytes) {
      return InvalidArgument("--param @" + path + ": " + std::to_string(size) +
                             " bytes is over the " + std::to_string(max_bytes) +
                             " a request may carry");
    }
    in.seekg(0);
    std::string bytes(static_cast<size_t>(size), '\0');
    if (!in.read(bytes.data(), size)) return IoError("--param @" + path + ": read failed");
    return bytes;
  };
}

}  // namespace vsc::client

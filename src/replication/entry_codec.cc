#include "replication/entry_codec.h"

#include <bit>
#include <cstring>

namespace vsc::replication {

void PutU8(std::string& out, uint8_t v) { out.push_back(static_cast<char>(v)); }

void PutU32(std::string& out, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>(v >> shift));
}

void PutU64(std::string& out, uint64_t v) {
  for (int shift = 56; shift >= 0; shift -= 8) out.push_back(static_cast<char>(v >> shift));
}

void PutBytes(std::string& out, std::string_view bytes) {
  PutU32(out, static_cast<uint32_t>(bytes.size()));
  out.append(bytes);
}

void PutValue(std::string& out, const Value& value) {
  PutU8(out, static_cast<uint8_t>(value.kind));
  switch (value.kind) {
    case Value::Kind::kNull:
      break;
    case Value::Kind::kInt:
      PutI64(out, value.i);
      break;
    case Value::Kind::kReal:
      PutU64(out, std::bit_cast<uint64_t>(value.r));
      break;
    case Value::Kind::kText:
    case Value::Kind::kBlob:
      PutBytes(out, value.bytes);
      break;
  }
}

void PutStatements(std::string& out, const std::vector<Statement>& statements) {
  PutU32(out, static_cast<uint32_t>(statements.size()));
  for (const Statement& s : statements) {
    PutBytes(out, s.sql);
    PutU32(out, static_cast<uint32_t>(s.params.size()));
    for (const Value& v : s.params) PutValue(out, v);
  }
}

std::string EncodeStatements(const std::vector<Statement>& statements) {
  std::string out;
  PutStatements(out, statements);
  return out;
}

namespace {

class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}
  bool U8(uint8_t& v) {
    if (in_.size() < 1) return false;
    v = static_cast<uint8_t>(in_[0]);
    in_.remove_prefix(1);
    return true;
  }
  bool U32(uint32_t& v) {
    if (in_.size() < 4) return false;
    v = 0;
    for (int k = 0; k < 4; ++k) v = (v << 8) | static_cast<uint8_t>(in_[k]);
    in_.remove_prefix(4);
    return true;
  }
  bool U64(uint64_t& v) {
    if (in_.size() < 8) return false;
    v = 0;
    for (int k = 0; k < 8; ++k) v = (v << 8) | static_cast<uint8_t>(in_[k]);
    in_.remove_prefix(8);
    return true;
  }
  bool Bytes(std::string& v) {
    uint32_t n = 0;
    if (!U32(n) || in_.size() < n) return false;
    v.assign(in_.substr(0, n));
    in_.remove_prefix(n);
    return true;
  }
  size_t remaining() const { return in_.size(); }

 private:
  std::string_view in_;
};

}  // namespace

Result<std::vector<Statement>> DecodeStatements(std::string_view bytes) {
  auto bad = [](const char* what) {
    return DataLoss(std::string("log payload: ") + what + "; the log file is damaged");
  };
  Reader r(bytes);
  uint32_t count = 0;
  if (!r.U32(count)) return bad("truncated statement count");
  // Each statement takes at least 8 bytes: refuse counts the input cannot hold before reserving.
  if (count > r.remaining() / 8) return bad("statement count larger than the payload");
  std::vector<Statement> out(count);
  for (Statement& s : out) {
    uint32_t nparams = 0;
    if (!r.Bytes(s.sql) || !r.U32(nparams)) return bad("truncated statement");
    if (nparams > r.remaining()) return bad("parameter count larger than the payload");
    s.params.resize(nparams);
    for (Value& v : s.params) {
      uint8_t kind = 0;
      if (!r.U8(kind)) return bad("truncated parameter");
      uint64_t u = 0;
      switch (kind) {
        case 0:
          v = Value::Null();
          break;
        case 1:
          if (!r.U64(u)) return bad("truncated integer parameter");
          v = Value::Int(static_cast<int64_t>(u));
          break;
        case 2:
          if (!r.U64(u)) return bad("truncated real parameter");
          v = Value::Real(std::bit_cast<double>(u));
          break;
        case 3:
        case 4:
          v.kind = static_cast<Value::Kind>(kind);
          if (!r.Bytes(v.bytes)) return bad("truncated text or blob parameter");
          break;
        default:
          return bad("unknown parameter kind");
      }
    }
  }
  if (r.remaining() != 0) return bad("trailing bytes after the statements");
  return out;
}

}  // namespace vsc::replication

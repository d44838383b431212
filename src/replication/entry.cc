#include "replication/entry.h"

namespace vsc::replication {

size_t PayloadBytes(const Entry& entry) {
  size_t n = 0;
  for (const Statement& s : entry.statements) {
    n += s.sql.size();
    for (const Value& v : s.params) {
      n += (v.kind == Value::Kind::kText || v.kind == Value::Kind::kBlob) ? v.bytes.size() : 8;
    }
  }
  return n;
}

}  // namespace vsc::replication

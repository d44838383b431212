// Random entries and statements for the replication property tests (seeded, reproducible).
#pragma once

#include <string>

#include "common/random.h"
#include "replication/entry.h"

namespace vsc::replication::testing_util {

inline std::string RandomBytes(Random& rng, size_t max_len) {
  std::string s(rng.Uniform(max_len + 1), '\0');
  for (char& c : s) c = static_cast<char>(rng.Uniform(256));
  return s;
}

inline Value RandomValue(Random& rng) {
  switch (rng.Uniform(5)) {
    case 0:
      return Value::Null();
    case 1:
      return Value::Int(static_cast<int64_t>(rng.Next()));
    case 2:
      return Value::Real(rng.NextDouble() * 1e6 - 5e5);
    case 3:
      return Value::Text(RandomBytes(rng, 12));
    default:
      return Value::Blob(RandomBytes(rng, 12));
  }
}

inline Statement RandomStatement(Random& rng) {
  Statement s;
  s.sql = "INSERT INTO t VALUES(" + std::to_string(rng.Uniform(1000)) + ")" + RandomBytes(rng, 4);
  const size_t n = rng.Uniform(4);
  for (size_t i = 0; i < n; ++i) s.params.push_back(RandomValue(rng));
  return s;
}

inline Entry RandomEntry(Random& rng, uint64_t seq) {
  Entry e;
  e.epoch = 1 + rng.Uniform(5);
  e.seq = seq;
  e.ts_micros = 1'700'000'000'000'000 + static_cast<int64_t>(rng.Uniform(1'000'000'000));
  e.kind = rng.Uniform(10) == 0 ? Entry::Kind::kChecksum : Entry::Kind::kWrite;
  if (e.kind == Entry::Kind::kWrite) {
    const size_t n = 1 + rng.Uniform(3);
    for (size_t i = 0; i < n; ++i) e.statements.push_back(RandomStatement(rng));
  }
  return e;
}

}  // namespace vsc::replication::testing_util

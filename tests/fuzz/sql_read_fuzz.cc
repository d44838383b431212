// Fuzzes SQL read requests on a real server: the ReadRequest a SqlService opens from an
// authenticated datagram, run by SqlReader (src/realserver/sql_reader.h) on a read connection to
// a replica database written by the real applier (a table of 300 rows, some TEXT that is not
// UTF-8, a REAL, a BLOB, NULLs). Invariants: the answer names the request and the replica; a
// refusal has a message and no rows; every row has one value per column; and the answer, sealed
// in an envelope as SqlService sends it, fits one datagram (kMaxSqlDatagram).
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>

#include "fuzz_records.h"
#include "fuzz_temp.h"
#include "proto/envelope.h"
#include "realserver/read_response_builder.h"
#include "realserver/sql_reader.h"
#include "replication/applier.h"
#include "replication/replica_store.h"

namespace {

using vsc::replication::Entry;
using vsc::replication::Statement;
using vsc::replication::Value;

std::string MakeReplica() {
  const std::string path = vsc::fuzz::TempDir() + "/read.db";
  auto ex = vsc::replication::OpenSqliteExecutor(path, {});
  if (!ex.ok()) vsc::fuzz::Fail(ex.status().ToString());
  auto applier = vsc::replication::Applier::Create(std::move(ex).value());
  if (!applier.ok()) vsc::fuzz::Fail(applier.status().ToString());
  Entry e;
  e.epoch = 1;
  e.seq = 1;
  e.ts_micros = 1'700'000'000'000'000;
  e.statements = {
      {"CREATE TABLE t(id INTEGER PRIMARY KEY, node TEXT NOT NULL, size INTEGER, r REAL, b BLOB)",
       {}},
      {"WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 300) "
       "INSERT INTO t SELECT i, 'node-' || (i % 7), i * 10, i / 3.0, randomblob(i % 9) FROM n",
       {}},
      {"INSERT INTO t VALUES (1000, ?1, NULL, ?2, ?3)",
       {Value::Text("\xff\x41"), Value::Real(1.5), Value::Blob(std::string("\0\1", 2))}},
  };
  auto applied = (*applier)->Apply(std::span<const Entry>(&e, 1));
  if (!applied.ok() || (*applied)[0].code != 0) vsc::fuzz::Fail("cannot write the replica");
  return path;
}

vsc::realserver::SqlReader& Reader() {
  static vsc::realserver::SqlReader reader = [] {
    vsc::realserver::SqlReaderOptions o;
    o.max_vm_steps = 2'000'000;  // production: 200,000,000; the interrupt path is the same
    auto r = vsc::realserver::SqlReader::Open(MakeReplica(), o);
    if (!r.ok()) vsc::fuzz::Fail(r.status().ToString());
    return std::move(r).value();
  }();
  return reader;
}

vsc::proto::EnvelopeCodec& Codec() {
  static const vsc::proto::ClusterKey key = [] {
    std::array<uint8_t, 32> b{};
    return vsc::proto::ClusterKey::FromBytes(b);
  }();
  static vsc::proto::EnvelopeCodec codec(key);
  return codec;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  vsc::proto::ReadRequest req;
  if (!vsc::fuzz::ParseMessage(std::string_view(reinterpret_cast<const char*>(data), size), req)) {
    return 0;
  }
  const std::string id = "rs1";
  vsc::proto::Message m;
  *m.mutable_read_response() = Reader().Run(req, id, id.size());
  const vsc::proto::ReadResponse& r = m.read_response();
  if (r.request_id() != req.request_id() || r.replica_id() != id) std::abort();
  if (!r.ok() && (r.error().empty() || r.rows_size() != 0)) std::abort();
  for (const auto& row : r.rows()) {
    if (row.values_size() != r.columns_size()) std::abort();
  }
  auto sealed = Codec().TrySeal(id, 1, m);
  if (!sealed.ok() || sealed->size() > vsc::realserver::kMaxSqlDatagram) std::abort();
  return 0;
}

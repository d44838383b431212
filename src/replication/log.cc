#include "replication/log.h"

#include <sqlite3.h>
#include <sys/stat.h>

#include <algorithm>
#include <optional>

#include "replication/digest.h"
#include "replication/entry_codec.h"
#include "replication/sql_util.h"
#include "store/database.h"
#include "store/transaction.h"

namespace vsc::replication {
namespace {

constexpr const char* kSchema =
    "CREATE TABLE IF NOT EXISTS entries(seq INTEGER PRIMARY KEY, epoch INTEGER NOT NULL, "
    "  ts INTEGER NOT NULL, kind INTEGER NOT NULL, bytes INTEGER NOT NULL, payload BLOB NOT NULL, "
    "  idem_key TEXT NOT NULL DEFAULT '', idem_window INTEGER NOT NULL DEFAULT 0);"
    "CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value) WITHOUT ROWID;"
    "CREATE TABLE IF NOT EXISTS schema(id INTEGER PRIMARY KEY, seq INTEGER NOT NULL, "
    "  sql TEXT NOT NULL);"
    "CREATE TABLE IF NOT EXISTS agreed(seq INTEGER PRIMARY KEY, digest BLOB NOT NULL);";

// A log file from before idempotency keys (issue 11) has entries without the key columns: add
// them (its entries carry no key).
Status AddKeyColumns(store::Database& db) {
  VSC_ASSIGN_OR_RETURN(
      store::Statement st,
      db.Prepare("SELECT count(*) FROM pragma_table_info('entries') WHERE name = 'idem_key'"));
  VSC_ASSIGN_OR_RETURN(bool row, st.Step());
  if (row && st.ColumnInt64(0) > 0) return Status::Ok();
  return db.Exec(
      "ALTER TABLE entries ADD COLUMN idem_key TEXT NOT NULL DEFAULT '';"
      "ALTER TABLE entries ADD COLUMN idem_window INTEGER NOT NULL DEFAULT 0;");
}

bool IsDdl(const std::string& sql) {
  const std::string k = FirstKeyword(sql);
  return k == "CREATE" || k == "DROP" || k == "ALTER";
}

}  // namespace

struct ReplicationLog::Impl {
  explicit Impl(store::Database d) : db(std::move(d)) {}
  store::Database db;
  std::string path;
  LogOptions options;
  bool reader = false;
  // Cached position (the owner keeps them current; a reader re-reads them on every access).
  uint64_t epoch = 0;
  uint64_t first_seq = 1;
  uint64_t last_seq = 0;
  int64_t last_ts = 0;
  uint64_t total_bytes = 0;

  Result<int64_t> MetaInt(const char* key) {
    VSC_ASSIGN_OR_RETURN(store::Statement st,
                         db.Prepare("SELECT value FROM meta WHERE key = ?1", true));
    VSC_RETURN_IF_ERROR(st.Bind(1, key));
    VSC_ASSIGN_OR_RETURN(bool row, st.Step());
    return row ? st.ColumnInt64(0) : int64_t{0};
  }
  // The statements of every group commit, prepared on first use and kept: preparing them
  // again for every Append cost more than the appends themselves (docs/benchmarks.md, issue 7).
  std::optional<store::TransactionStatements> txn;
  std::optional<store::Statement> insert_entry, insert_schema, set_meta;

  Result<store::Statement*> Kept(std::optional<store::Statement>& slot, const char* sql) {
    if (!slot) {
      VSC_ASSIGN_OR_RETURN(store::Statement st, db.Prepare(sql, true));
      slot.emplace(std::move(st));
    }
    return &*slot;
  }
  Result<store::Transaction> Begin() {
    if (!txn) {
      VSC_ASSIGN_OR_RETURN(store::TransactionStatements t,
                           store::TransactionStatements::Prepare(db));
      txn.emplace(std::move(t));
    }
    return store::Transaction::Begin(*txn);
  }
  Status SetMeta(const char* key, int64_t value) {
    VSC_ASSIGN_OR_RETURN(store::Statement * st,
                         Kept(set_meta, "INSERT OR REPLACE INTO meta(key, value) VALUES(?1, ?2)"));
    VSC_RETURN_IF_ERROR(st->Bind(1, key));
    VSC_RETURN_IF_ERROR(st->BindInt64(2, value));
    return st->Run();
  }
  Status Load() {
    VSC_ASSIGN_OR_RETURN(int64_t e, MetaInt("epoch"));
    VSC_ASSIGN_OR_RETURN(int64_t s, MetaInt("last_seq"));
    VSC_ASSIGN_OR_RETURN(int64_t t, MetaInt("last_ts"));
    epoch = static_cast<uint64_t>(e);
    last_seq = static_cast<uint64_t>(s);
    last_ts = t;
    VSC_ASSIGN_OR_RETURN(store::Statement st,
                         db.Prepare("SELECT min(seq), total(bytes) FROM entries", true));
    VSC_ASSIGN_OR_RETURN(bool row, st.Step());
    (void)row;  // an aggregate always returns one row
    first_seq = st.ColumnType(0) == store::ValueType::kNull
                    ? last_seq + 1
                    : static_cast<uint64_t>(st.ColumnInt64(0));
    total_bytes = static_cast<uint64_t>(st.ColumnDouble(1));
    return Status::Ok();
  }
  void Refresh() {
    // A reader's view can only be as fresh as the file; on a read error the last view stays.
    if (reader) (void)Load();
  }
  Status Writable() const {
    if (reader) return FailedPrecondition("replication log: opened for reading only");
    return Status::Ok();
  }
};

Result<std::unique_ptr<ReplicationLog>> ReplicationLog::Open(const std::string& path,
                                                             const LogOptions& options) {
  store::OpenOptions o;
  o.synchronous = options.synchronous_full ? "FULL" : "NORMAL";
  VSC_ASSIGN_OR_RETURN(store::Database db, store::Database::Open(path, o));
  auto impl = std::make_unique<Impl>(std::move(db));
  impl->path = path;
  impl->options = options;
  {
    VSC_ASSIGN_OR_RETURN(store::Transaction txn, store::Transaction::Begin(impl->db));
    VSC_RETURN_IF_ERROR(impl->db.Exec(kSchema));
    VSC_RETURN_IF_ERROR(AddKeyColumns(impl->db));
    VSC_ASSIGN_OR_RETURN(int64_t epoch, impl->MetaInt("epoch"));
    if (options.bump_epoch) VSC_RETURN_IF_ERROR(impl->SetMeta("epoch", epoch + 1));
    VSC_RETURN_IF_ERROR(txn.Commit());
  }
  VSC_RETURN_IF_ERROR(impl->Load());
  std::unique_ptr<ReplicationLog> log(new ReplicationLog());
  log->impl_ = std::move(impl);
  return log;
}

Result<std::unique_ptr<ReplicationLog>> ReplicationLog::OpenReader(const std::string& path) {
  struct stat sb;
  if (::stat(path.c_str(), &sb) != 0) {
    return NotFound("replication log '" + path + "' does not exist");
  }
  store::OpenOptions o;
  o.read_only = true;
  o.synchronous.clear();
  VSC_ASSIGN_OR_RETURN(store::Database db, store::Database::Open(path, o));
  auto impl = std::make_unique<Impl>(std::move(db));
  impl->path = path;
  impl->reader = true;
  VSC_RETURN_IF_ERROR(impl->Load());
  std::unique_ptr<ReplicationLog> log(new ReplicationLog());
  log->impl_ = std::move(impl);
  return log;
}

ReplicationLog::~ReplicationLog() = default;

Status ReplicationLog::AdoptEpoch(uint64_t epoch) {
  VSC_RETURN_IF_ERROR(impl_->Writable());
  if (epoch <= impl_->epoch) {
    return FailedPrecondition("replication log '" + impl_->path + "': epoch " +
                              std::to_string(epoch) + " is not above the log's epoch " +
                              std::to_string(impl_->epoch) +
                              " (was etcd's data reset? epochs must never go backwards)");
  }
  VSC_RETURN_IF_ERROR(impl_->SetMeta("epoch", static_cast<int64_t>(epoch)));
  impl_->epoch = epoch;
  return Status::Ok();
}

uint64_t ReplicationLog::epoch() const {
  impl_->Refresh();
  return impl_->epoch;
}
uint64_t ReplicationLog::first_seq() const {
  impl_->Refresh();
  return impl_->first_seq;
}
uint64_t ReplicationLog::last_seq() const {
  impl_->Refresh();
  return impl_->last_seq;
}
int64_t ReplicationLog::last_ts_micros() const {
  impl_->Refresh();
  return impl_->last_ts;
}

Status ReplicationLog::Append(std::span<const Entry> entries) {
  VSC_RETURN_IF_ERROR(impl_->Writable());
  if (entries.empty()) return Status::Ok();
  for (size_t i = 0; i < entries.size(); ++i) {
    if (entries[i].seq != impl_->last_seq + 1 + i) {
      return FailedPrecondition("replication log: append of seq " + std::to_string(entries[i].seq) +
                                " but the next seq is " + std::to_string(impl_->last_seq + 1 + i));
    }
  }
  uint64_t added_bytes = 0;
  {
    VSC_ASSIGN_OR_RETURN(store::Transaction txn, impl_->Begin());
    VSC_ASSIGN_OR_RETURN(store::Statement * insert,
                         impl_->Kept(impl_->insert_entry,
                                     "INSERT INTO entries(seq, epoch, ts, kind, bytes, payload, "
                                     "idem_key, idem_window) "
                                     "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)"));
    VSC_ASSIGN_OR_RETURN(
        store::Statement * schema,
        impl_->Kept(impl_->insert_schema, "INSERT INTO schema(seq, sql) VALUES(?1, ?2)"));
    store::Statement& ins = *insert;
    store::Statement& ddl = *schema;
    std::string payload;
    for (const Entry& e : entries) {
      payload.clear();
      PutStatements(payload, e.statements);
      VSC_RETURN_IF_ERROR(ins.BindInt64(1, static_cast<int64_t>(e.seq)));
      VSC_RETURN_IF_ERROR(ins.BindInt64(2, static_cast<int64_t>(e.epoch)));
      VSC_RETURN_IF_ERROR(ins.BindInt64(3, e.ts_micros));
      VSC_RETURN_IF_ERROR(ins.BindInt64(4, static_cast<int64_t>(e.kind)));
      VSC_RETURN_IF_ERROR(ins.BindInt64(5, static_cast<int64_t>(payload.size())));
      VSC_RETURN_IF_ERROR(
          ins.Bind(6, std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(payload.data()),
                                               payload.size())));
      VSC_RETURN_IF_ERROR(ins.Bind(7, std::string_view(e.idempotency_key)));
      VSC_RETURN_IF_ERROR(ins.BindInt64(8, static_cast<int64_t>(e.idempotency_window)));
      VSC_RETURN_IF_ERROR(ins.Run());
      added_bytes += payload.size();
      if (e.kind != Entry::Kind::kWrite) continue;
      for (const Statement& s : e.statements) {
        if (!IsDdl(s.sql)) continue;
        VSC_RETURN_IF_ERROR(ddl.BindInt64(1, static_cast<int64_t>(e.seq)));
        VSC_RETURN_IF_ERROR(ddl.Bind(2, std::string_view(s.sql)));
        VSC_RETURN_IF_ERROR(ddl.Run());
      }
    }
    VSC_RETURN_IF_ERROR(impl_->SetMeta("last_seq", static_cast<int64_t>(entries.back().seq)));
    VSC_RETURN_IF_ERROR(
        impl_->SetMeta("last_ts", std::max(impl_->last_ts, entries.back().ts_micros)));
    VSC_RETURN_IF_ERROR(txn.Commit());
  }
  if (impl_->last_seq + 1 == impl_->first_seq) impl_->first_seq = entries.front().seq;
  impl_->last_seq = entries.back().seq;
  impl_->last_ts = std::max(impl_->last_ts, entries.back().ts_micros);
  impl_->total_bytes += added_bytes;
  return Status::Ok();
}

Result<std::vector<Entry>> ReplicationLog::Read(uint64_t from_seq, size_t max_entries,
                                                size_t max_bytes) const {
  impl_->Refresh();
  std::vector<Entry> out;
  if (from_seq > impl_->last_seq) return out;
  VSC_ASSIGN_OR_RETURN(store::Statement st,
                       impl_->db.Prepare("SELECT seq, epoch, ts, kind, payload, idem_key, "
                                         "idem_window FROM entries "
                                         "WHERE seq >= ?1 ORDER BY seq LIMIT ?2",
                                         true));
  VSC_RETURN_IF_ERROR(st.BindInt64(1, static_cast<int64_t>(from_seq)));
  VSC_RETURN_IF_ERROR(st.BindInt64(2, static_cast<int64_t>(std::max<size_t>(max_entries, 1))));
  size_t bytes = 0;
  for (;;) {
    VSC_ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) break;
    const auto seq = static_cast<uint64_t>(st.ColumnInt64(0));
    if (seq != from_seq + out.size()) break;  // a gap can only be the trimmed head
    auto payload = st.ColumnBlob(4);
    if (!out.empty() && bytes + payload.size() > max_bytes) break;
    bytes += payload.size();
    Entry e;
    e.seq = seq;
    e.epoch = static_cast<uint64_t>(st.ColumnInt64(1));
    e.ts_micros = st.ColumnInt64(2);
    e.kind = static_cast<Entry::Kind>(st.ColumnInt64(3));
    e.idempotency_key = std::string(st.ColumnText(5));
    e.idempotency_window = static_cast<uint64_t>(st.ColumnInt64(6));
    VSC_ASSIGN_OR_RETURN(e.statements,
                         DecodeStatements(std::string_view(
                             reinterpret_cast<const char*>(payload.data()), payload.size())));
    out.push_back(std::move(e));
  }
  if (out.empty()) {
    return NotFound("replication log: seq " + std::to_string(from_seq) +
                    " was trimmed (the oldest entry held is " + std::to_string(impl_->first_seq) +
                    "); copy a snapshot instead");
  }
  return out;
}

Result<std::vector<std::string>> ReplicationLog::Schema() const {
  VSC_ASSIGN_OR_RETURN(store::Statement st,
                       impl_->db.Prepare("SELECT sql FROM schema ORDER BY id"));
  std::vector<std::string> out;
  for (;;) {
    VSC_ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) break;
    out.emplace_back(st.ColumnText(0));
  }
  return out;
}

Status ReplicationLog::SetBootstrap(const std::vector<std::string>& ddl,
                                    const std::string& checksum) {
  VSC_RETURN_IF_ERROR(impl_->Writable());
  store::Database& db = impl_->db;
  VSC_ASSIGN_OR_RETURN(store::Transaction txn, store::Transaction::Begin(db));
  VSC_ASSIGN_OR_RETURN(store::Statement probe,
                       db.Prepare("SELECT (SELECT count(*) FROM meta WHERE key = "
                                  "'bootstrap_checksum') + (SELECT count(*) FROM schema)"));
  VSC_ASSIGN_OR_RETURN(bool row, probe.Step());
  if (!row || probe.ColumnInt64(0) != 0 || impl_->last_seq != 0) {
    return FailedPrecondition(
        "replication log: the bootstrap is recorded already (or entries were sequenced); it "
        "can only be set on a new log");
  }
  VSC_ASSIGN_OR_RETURN(store::Statement ins,
                       db.Prepare("INSERT INTO schema(seq, sql) VALUES(0, ?1)"));
  for (const std::string& sql : ddl) {
    VSC_RETURN_IF_ERROR(ins.Bind(1, std::string_view(sql)));
    VSC_RETURN_IF_ERROR(ins.Run());
  }
  VSC_ASSIGN_OR_RETURN(store::Statement meta,
                       db.Prepare("INSERT INTO meta(key, value) VALUES('bootstrap_checksum', ?1)"));
  VSC_RETURN_IF_ERROR(meta.Bind(1, std::string_view(checksum)));
  VSC_RETURN_IF_ERROR(meta.Run());
  return txn.Commit();
}

std::string ReplicationLog::BootstrapChecksum() const {
  auto st = impl_->db.Prepare("SELECT value FROM meta WHERE key = 'bootstrap_checksum'");
  if (!st.ok()) return "";
  auto row = st->Step();
  return row.ok() && *row ? std::string(st->ColumnText(0)) : std::string();
}

Status ReplicationLog::SetAgreedDigest(uint64_t seq, const Digest& digest) {
  VSC_RETURN_IF_ERROR(impl_->Writable());
  if (seq == 0 || seq > impl_->last_seq) {
    return InvalidArgument("replication log: agreed digest for seq " + std::to_string(seq) +
                           ", which was not sequenced (last seq " +
                           std::to_string(impl_->last_seq) + ")");
  }
  VSC_ASSIGN_OR_RETURN(
      store::Statement st,
      impl_->db.Prepare("INSERT OR REPLACE INTO agreed(seq, digest) VALUES(?1, ?2)", true));
  VSC_RETURN_IF_ERROR(st.BindInt64(1, static_cast<int64_t>(seq)));
  VSC_RETURN_IF_ERROR(st.Bind(2, std::span<const uint8_t>(digest.data(), digest.size())));
  return st.Run();
}

Result<Digest> ReplicationLog::AgreedDigest(uint64_t seq) const {
  VSC_ASSIGN_OR_RETURN(store::Statement st,
                       impl_->db.Prepare("SELECT digest FROM agreed WHERE seq = ?1", true));
  VSC_RETURN_IF_ERROR(st.BindInt64(1, static_cast<int64_t>(seq)));
  VSC_ASSIGN_OR_RETURN(bool row, st.Step());
  if (!row) {
    return NotFound("replication log: no agreed digest recorded for seq " + std::to_string(seq));
  }
  auto blob = st.ColumnBlob(0);
  return DigestFromBytes(std::string_view(reinterpret_cast<const char*>(blob.data()), blob.size()));
}

Status ReplicationLog::Rebase(uint64_t seq, const Digest& digest,
                              const std::vector<std::string>& ddl) {
  VSC_RETURN_IF_ERROR(impl_->Writable());
  store::Database& db = impl_->db;
  {
    VSC_ASSIGN_OR_RETURN(store::Transaction txn, store::Transaction::Begin(db));
    VSC_RETURN_IF_ERROR(db.Exec("DELETE FROM entries; DELETE FROM agreed; DELETE FROM schema;"));
    VSC_ASSIGN_OR_RETURN(store::Statement ins,
                         db.Prepare("INSERT INTO schema(seq, sql) VALUES(?1, ?2)"));
    for (const std::string& sql : ddl) {
      VSC_RETURN_IF_ERROR(ins.BindInt64(1, static_cast<int64_t>(seq)));
      VSC_RETURN_IF_ERROR(ins.Bind(2, std::string_view(sql)));
      VSC_RETURN_IF_ERROR(ins.Run());
    }
    if (seq > 0) {
      VSC_ASSIGN_OR_RETURN(store::Statement agreed,
                           db.Prepare("INSERT INTO agreed(seq, digest) VALUES(?1, ?2)"));
      VSC_RETURN_IF_ERROR(agreed.BindInt64(1, static_cast<int64_t>(seq)));
      VSC_RETURN_IF_ERROR(agreed.Bind(2, std::span<const uint8_t>(digest.data(), digest.size())));
      VSC_RETURN_IF_ERROR(agreed.Run());
    }
    VSC_RETURN_IF_ERROR(impl_->SetMeta("last_seq", static_cast<int64_t>(seq)));
    VSC_RETURN_IF_ERROR(txn.Commit());
  }
  impl_->last_seq = seq;
  impl_->first_seq = seq + 1;
  impl_->total_bytes = 0;
  return Status::Ok();
}

Result<uint64_t> ReplicationLog::Trim() {
  VSC_RETURN_IF_ERROR(impl_->Writable());
  Impl& d = *impl_;
  if (d.last_seq < d.first_seq) return uint64_t{0};
  uint64_t cutoff = d.first_seq;  // keep seq >= cutoff
  if (d.last_seq - d.first_seq + 1 > d.options.retain_entries) {
    cutoff = d.last_seq + 1 - std::max<uint64_t>(d.options.retain_entries, 1);
  }
  uint64_t removed_bytes = 0;
  {
    // Bytes of what the entry rule removes, then further oldest entries until under budget.
    VSC_ASSIGN_OR_RETURN(store::Statement st,
                         d.db.Prepare("SELECT seq, bytes FROM entries ORDER BY seq"));
    for (;;) {
      VSC_ASSIGN_OR_RETURN(bool row, st.Step());
      if (!row) break;
      const auto seq = static_cast<uint64_t>(st.ColumnInt64(0));
      const auto bytes = static_cast<uint64_t>(st.ColumnInt64(1));
      if (seq >= d.last_seq) break;  // the newest entry always stays
      if (seq >= cutoff && d.total_bytes - removed_bytes <= d.options.retain_bytes) break;
      removed_bytes += bytes;
      cutoff = std::max(cutoff, seq + 1);
    }
  }
  if (cutoff <= d.first_seq) return uint64_t{0};
  {
    VSC_ASSIGN_OR_RETURN(store::Transaction txn, store::Transaction::Begin(d.db));
    VSC_ASSIGN_OR_RETURN(store::Statement del, d.db.Prepare("DELETE FROM entries WHERE seq < ?1"));
    VSC_RETURN_IF_ERROR(del.BindInt64(1, static_cast<int64_t>(cutoff)));
    VSC_RETURN_IF_ERROR(del.Run());
    VSC_ASSIGN_OR_RETURN(store::Statement dela, d.db.Prepare("DELETE FROM agreed WHERE seq < ?1"));
    VSC_RETURN_IF_ERROR(dela.BindInt64(1, static_cast<int64_t>(cutoff)));
    VSC_RETURN_IF_ERROR(dela.Run());
    VSC_RETURN_IF_ERROR(txn.Commit());
  }
  const uint64_t trimmed = cutoff - d.first_seq;
  d.first_seq = cutoff;
  d.total_bytes -= removed_bytes;
  return trimmed;
}

}  // namespace vsc::replication

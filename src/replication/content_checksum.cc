// Checksum, ChecksumConnection and ReadReplicaState (replica_store.h).
#include <openssl/evp.h>
#include <sqlite3.h>

#include <memory>

#include "replication/entry_codec.h"
#include "replication/replica_store.h"
#include "replication/sql_util.h"
#include "store/database.h"

namespace vsc::replication {
namespace {

std::string Quote(std::string_view name) {
  std::string out = "\"";
  for (char c : name) {
    if (c == '"') out.push_back('"');
    out.push_back(c);
  }
  out.push_back('"');
  return out;
}

struct StmtCloser {
  void operator()(sqlite3_stmt* s) const { sqlite3_finalize(s); }
};
using Stmt = std::unique_ptr<sqlite3_stmt, StmtCloser>;

Result<Stmt> Prepare(sqlite3* db, const std::string& sql) {
  sqlite3_stmt* raw = nullptr;
  const int rc = sqlite3_prepare_v2(db, sql.c_str(), static_cast<int>(sql.size()), &raw, nullptr);
  if (rc != SQLITE_OK) {
    return Internal("checksum: prepare '" + sql + "': " + sqlite3_errmsg(db));
  }
  return Stmt(raw);
}

Status StepError(sqlite3* db, int rc, const std::string& what) {
  const std::string m = "checksum: " + what + ": " + sqlite3_errmsg(db);
  const int primary = rc & 0xff;
  if (primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB) return DataLoss(m);
  if (primary == SQLITE_BUSY || primary == SQLITE_LOCKED) return Unavailable(m);
  return IoError(m);
}

class Hasher {
 public:
  Hasher() : ctx_(EVP_MD_CTX_new()) { EVP_DigestInit_ex(ctx_, EVP_sha256(), nullptr); }
  ~Hasher() { EVP_MD_CTX_free(ctx_); }
  Hasher(const Hasher&) = delete;
  Hasher& operator=(const Hasher&) = delete;
  // Buffers small writes; the digest is the same as hashing the concatenation.
  std::string& buf() { return buf_; }
  void Flush() {
    EVP_DigestUpdate(ctx_, buf_.data(), buf_.size());
    buf_.clear();
  }
  void MaybeFlush() {
    if (buf_.size() >= 64 * 1024) Flush();
  }
  std::string Hex() {
    Flush();
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    EVP_DigestFinal_ex(ctx_, md, &n);
    static constexpr char kHex[] = "0123456789abcdef";
    std::string out;
    for (unsigned int i = 0; i < n; ++i) {
      out.push_back(kHex[md[i] >> 4]);
      out.push_back(kHex[md[i] & 15]);
    }
    return out;
  }

 private:
  EVP_MD_CTX* ctx_;
  std::string buf_;
};

constexpr const char* kUserObjects =
    "FROM sqlite_master WHERE sql IS NOT NULL "
    "AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' AND name NOT LIKE '\\_vsc\\_%' ESCAPE '\\' "
    "AND tbl_name NOT LIKE '\\_vsc\\_%' ESCAPE '\\' ";

}  // namespace

Result<std::string> ChecksumConnection(sqlite3* db) {
  Hasher h;
  std::vector<std::pair<std::string, std::string>> tables;  // name, sql
  {
    VSC_ASSIGN_OR_RETURN(Stmt st, Prepare(db, std::string("SELECT type, name, tbl_name, sql ") +
                                                  kUserObjects + "ORDER BY type, name"));
    for (;;) {
      const int rc = sqlite3_step(st.get());
      if (rc == SQLITE_DONE) break;
      if (rc != SQLITE_ROW) return StepError(db, rc, "reading the schema");
      std::string cols[4];
      for (int c = 0; c < 4; ++c) {
        const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(st.get(), c));
        cols[c] = p == nullptr ? "" : p;
      }
      PutU8(h.buf(), 'S');
      for (const auto& c : cols) PutBytes(h.buf(), c);
      if (cols[0] == "table" &&
          !(cols[3].size() > 6 && FirstKeyword(cols[3].substr(6)) == "VIRTUAL")) {
        tables.emplace_back(cols[1], cols[3]);
      }
    }
  }
  // Tables were listed by (type, name): already in name order.
  for (const auto& [name, sql] : tables) {
    std::string order;
    bool has_rowid = true;
    {
      sqlite3_stmt* probe = nullptr;
      const std::string q = "SELECT _rowid_ FROM " + Quote(name);
      has_rowid = sqlite3_prepare_v2(db, q.c_str(), -1, &probe, nullptr) == SQLITE_OK;
      sqlite3_finalize(probe);
    }
    if (has_rowid) {
      order = "_rowid_";
    } else {
      VSC_ASSIGN_OR_RETURN(Stmt pk, Prepare(db,
                                            "SELECT name FROM pragma_table_info(?1) "
                                            "WHERE pk > 0 ORDER BY pk"));
      sqlite3_bind_text(pk.get(), 1, name.c_str(), -1, SQLITE_TRANSIENT);
      for (;;) {
        const int rc = sqlite3_step(pk.get());
        if (rc == SQLITE_DONE) break;
        if (rc != SQLITE_ROW) return StepError(db, rc, "reading the key of " + name);
        if (!order.empty()) order += ", ";
        order += Quote(reinterpret_cast<const char*>(sqlite3_column_text(pk.get(), 0)));
      }
    }
    const std::string q = "SELECT " + std::string(has_rowid ? "_rowid_, " : "") + "* FROM " +
                          Quote(name) + " ORDER BY " + order;
    VSC_ASSIGN_OR_RETURN(Stmt rows, Prepare(db, q));
    const int ncols = sqlite3_column_count(rows.get());
    PutU8(h.buf(), 'T');
    PutBytes(h.buf(), name);
    PutU32(h.buf(), static_cast<uint32_t>(ncols));
    for (;;) {
      const int rc = sqlite3_step(rows.get());
      if (rc == SQLITE_DONE) break;
      if (rc != SQLITE_ROW) return StepError(db, rc, "reading " + name);
      PutU8(h.buf(), 'R');
      for (int c = 0; c < ncols; ++c) PutValue(h.buf(), ColumnValue(rows.get(), c));
      h.MaybeFlush();
    }
  }
  return h.Hex();
}

Result<std::string> Checksum(const std::string& path) {
  store::OpenOptions o;
  o.read_only = true;
  o.synchronous.clear();
  VSC_ASSIGN_OR_RETURN(store::Database db, store::Database::Open(path, o));
  // One read transaction: the hash describes a single snapshot even while a writer commits.
  VSC_RETURN_IF_ERROR(db.Exec("BEGIN"));
  auto sum = ChecksumConnection(db.handle());
  (void)db.Exec("COMMIT");
  return sum;
}

Result<ReplicaState> ReadReplicaState(const std::string& path) {
  store::OpenOptions o;
  o.read_only = true;
  o.synchronous.clear();
  VSC_ASSIGN_OR_RETURN(store::Database db, store::Database::Open(path, o));
  VSC_ASSIGN_OR_RETURN(
      store::Statement probe,
      db.Prepare("SELECT count(*) FROM sqlite_master WHERE name = '_vsc_replica'"));
  VSC_ASSIGN_OR_RETURN(bool row, probe.Step());
  ReplicaState state;
  if (!row || probe.ColumnInt64(0) == 0) return state;
  VSC_ASSIGN_OR_RETURN(
      store::Statement st,
      db.Prepare("SELECT epoch, applied_seq, digest FROM _vsc_replica WHERE id = 0"));
  VSC_ASSIGN_OR_RETURN(bool has, st.Step());
  if (!has) return state;
  state.epoch = static_cast<uint64_t>(st.ColumnInt64(0));
  state.applied_seq = static_cast<uint64_t>(st.ColumnInt64(1));
  auto blob = st.ColumnBlob(2);
  if (blob.size() != state.digest.size()) {
    return DataLoss("replica state in '" + path + "': digest of " + std::to_string(blob.size()) +
                    " bytes; the database is damaged");
  }
  std::copy(blob.begin(), blob.end(), state.digest.begin());
  return state;
}

}  // namespace vsc::replication

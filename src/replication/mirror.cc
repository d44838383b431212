#include "replication/mirror.h"

#include <sqlite3.h>

#include <algorithm>
#include <cctype>
#include <unordered_map>

#include "replication/sql_util.h"
#include "store/database.h"

namespace vsc::replication {
namespace {

constexpr const char* kPrefix = "statement refused: ";

// Functions whose value depends on the connection, the build or the file (see mirror.h).
constexpr std::string_view kNondeterministic[] = {
    "last_insert_rowid",        "changes",          "total_changes",
    "sqlite_version",           "sqlite_source_id", "sqlite_compileoption_used",
    "sqlite_compileoption_get", "sqlite_offset",    "load_extension",
};

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool IsIdentChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// `name(` as a whole word in lower-cased SQL text.
bool MentionsCall(const std::string& lower_sql, std::string_view name) {
  for (size_t pos = lower_sql.find(name); pos != std::string::npos;
       pos = lower_sql.find(name, pos + 1)) {
    if (pos > 0 && IsIdentChar(lower_sql[pos - 1])) continue;
    size_t end = pos + name.size();
    while (end < lower_sql.size() && std::isspace(static_cast<unsigned char>(lower_sql[end])))
      ++end;
    if (end < lower_sql.size() && lower_sql[end] == '(') return true;
  }
  return false;
}

// A 'localtime' or 'utc' modifier, quoted in the SQL or bound as a parameter.
std::string TimeZoneModifier(const Statement& st) {
  const std::string lower = Lower(st.sql);
  for (std::string_view m : {"localtime", "utc"}) {
    for (char q : {'\'', '"'}) {
      if (lower.find(std::string(1, q) + std::string(m) + q) != std::string::npos) {
        return std::string(m);
      }
    }
    for (const Value& v : st.params) {
      if (v.kind == Value::Kind::kText && Lower(v.bytes) == m) return std::string(m);
    }
  }
  return "";
}

std::string Plural(size_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

// What the authorizer saw while one statement was prepared.
struct Seen {
  bool ddl = false;
  bool transaction = false;
  bool attach = false;
  bool pragma = false;
  bool temp = false;
  bool vtable = false;
  std::string internal_name;  // a _vsc_* object created, dropped or written
  std::string function;       // the first nondeterministic function called
};

bool IsInternalName(const char* name) {
  return name != nullptr && std::string_view(name).substr(0, 5) == "_vsc_";
}

}  // namespace

struct SchemaMirror::Impl {
  explicit Impl(store::Database d) : db(std::move(d)) {}
  store::Database db;
  bool checking = false;  // the authorizer records only while Check prepares
  Seen seen;
  // Writes already checked against the current schema: their SQL text passed every check that
  // depends on the text alone, so a writer repeating one statement with new values costs a hash
  // lookup instead of a prepare (16 % of the director's CPU under single-statement writes).
  // Cleared whenever the schema changes; not used while a batch holds uncommitted DDL.
  static constexpr size_t kMaxChecked = 1024;
  std::unordered_map<std::string, size_t> checked_writes;  // SQL text -> parameter count
  bool schema_tentative = false;

  static int Authorize(void* self, int action, const char* a3, const char* a4, const char*,
                       const char*) {
    auto* impl = static_cast<Impl*>(self);
    if (!impl->checking) return SQLITE_OK;
    Seen& s = impl->seen;
    switch (action) {
      case SQLITE_CREATE_INDEX:
      case SQLITE_CREATE_TABLE:
      case SQLITE_CREATE_TRIGGER:
      case SQLITE_CREATE_VIEW:
      case SQLITE_DROP_INDEX:
      case SQLITE_DROP_TABLE:
      case SQLITE_DROP_TRIGGER:
      case SQLITE_DROP_VIEW:
        s.ddl = true;
        if (IsInternalName(a3)) s.internal_name = a3;
        if (action == SQLITE_CREATE_TRIGGER || action == SQLITE_DROP_TRIGGER ||
            action == SQLITE_CREATE_INDEX || action == SQLITE_DROP_INDEX) {
          if (IsInternalName(a4)) s.internal_name = a4;  // the table the object is on
        }
        break;
      case SQLITE_ALTER_TABLE:
        s.ddl = true;
        if (IsInternalName(a4)) s.internal_name = a4;
        break;
      case SQLITE_CREATE_TEMP_INDEX:
      case SQLITE_CREATE_TEMP_TABLE:
      case SQLITE_CREATE_TEMP_TRIGGER:
      case SQLITE_CREATE_TEMP_VIEW:
      case SQLITE_DROP_TEMP_INDEX:
      case SQLITE_DROP_TEMP_TABLE:
      case SQLITE_DROP_TEMP_TRIGGER:
      case SQLITE_DROP_TEMP_VIEW:
        s.temp = true;
        break;
      case SQLITE_CREATE_VTABLE:
      case SQLITE_DROP_VTABLE:
        s.vtable = true;
        break;
      case SQLITE_TRANSACTION:
      case SQLITE_SAVEPOINT:
        s.transaction = true;
        break;
      case SQLITE_ATTACH:
      case SQLITE_DETACH:
        s.attach = true;
        break;
      case SQLITE_PRAGMA:
        s.pragma = true;
        break;
      case SQLITE_INSERT:
      case SQLITE_UPDATE:
      case SQLITE_DELETE:
        if (IsInternalName(a3)) s.internal_name = a3;
        break;
      case SQLITE_FUNCTION:
        if (a4 != nullptr && s.function.empty()) {
          const std::string name = Lower(a4);
          if (std::find(std::begin(kNondeterministic), std::end(kNondeterministic), name) !=
              std::end(kNondeterministic)) {
            s.function = name;
          }
        }
        break;
      default:
        break;
    }
    return SQLITE_OK;
  }

  Result<StatementKind> Check(const Statement& st) {
    if (!schema_tentative) {
      if (auto it = checked_writes.find(st.sql); it != checked_writes.end()) {
        VSC_RETURN_IF_ERROR(CheckParamCount(st, it->second));
        VSC_RETURN_IF_ERROR(CheckTimeZone(st));
        return StatementKind::kWrite;
      }
    }
    auto kind = CheckText(st);
    if (kind.ok() && *kind == StatementKind::kWrite && !schema_tentative) {
      if (checked_writes.size() >= kMaxChecked) checked_writes.clear();
      checked_writes.emplace(st.sql, st.params.size());
    }
    return kind;
  }

  void SchemaChanged() { checked_writes.clear(); }

  static Status CheckParamCount(const Statement& st, size_t nparams) {
    if (nparams == st.params.size()) return Status::Ok();
    return InvalidArgument(std::string(kPrefix) + "statement has " +
                           Plural(nparams, "parameter", "parameters") + " but " +
                           Plural(st.params.size(), "value was bound", "values were bound") +
                           "; bind exactly one value per parameter (?1..?N in order)");
  }

  static Status CheckTimeZone(const Statement& st) {
    std::string m = TimeZoneModifier(st);
    if (m.empty()) return Status::Ok();
    return InvalidArgument(std::string(kPrefix) + "the '" + m +
                           "' date/time modifier depends on each replica's time zone; store "
                           "UTC and convert when reading");
  }

  Result<StatementKind> CheckText(const Statement& st) {
    if (IsBlankSql(st.sql)) {
      return InvalidArgument(std::string(kPrefix) + "empty statement; send one SQL statement");
    }
    seen = Seen{};
    checking = true;
    sqlite3_stmt* raw = nullptr;
    const char* tail = nullptr;
    const int rc = sqlite3_prepare_v3(db.handle(), st.sql.data(), static_cast<int>(st.sql.size()),
                                      0, &raw, &tail);
    checking = false;
    store::Statement holder(raw);  // finalizes
    if (rc != SQLITE_OK) {
      return InvalidArgument(std::string(kPrefix) + sqlite3_errmsg(db.handle()));
    }
    if (raw == nullptr) {
      return InvalidArgument(std::string(kPrefix) + "empty statement; send one SQL statement");
    }
    if (!IsBlankSql(std::string_view(tail, st.sql.data() + st.sql.size() - tail))) {
      return InvalidArgument(std::string(kPrefix) +
                             "more than one statement in request; send one statement per request "
                             "(several statements that must apply together go in one batch)");
    }
    const std::string keyword = FirstKeyword(st.sql);
    if (seen.transaction) {
      return InvalidArgument(
          std::string(kPrefix) +
          "transaction control (BEGIN, COMMIT, ROLLBACK, SAVEPOINT, RELEASE) is not accepted on "
          "the write port; every write runs in its own transaction on the replicas; send "
          "statements that must apply together as one batch");
    }
    if (seen.attach) {
      return InvalidArgument(std::string(kPrefix) +
                             "ATTACH and DETACH are not accepted on the write port; each replica "
                             "holds exactly one database");
    }
    if (seen.pragma) {
      return InvalidArgument(std::string(kPrefix) +
                             "PRAGMA is not accepted on the write port; replica settings are "
                             "managed by the cluster, and read-only pragmas go to the read port");
    }
    if (keyword == "VACUUM") {
      return InvalidArgument(std::string(kPrefix) +
                             "VACUUM is not accepted on the write port; it may renumber the rowids "
                             "of tables without an INTEGER PRIMARY KEY differently on each "
                             "replica; run it on each replica while it is out of service");
    }
    if (seen.temp) {
      return InvalidArgument(std::string(kPrefix) +
                             "temporary tables, views, indexes and triggers are not accepted on "
                             "the write port; they would exist only inside one replica's "
                             "connection; create a regular table instead");
    }
    if (seen.vtable) {
      return InvalidArgument(std::string(kPrefix) +
                             "virtual tables are not accepted on the write port; their content "
                             "is not replicated by statements");
    }
    if (!seen.internal_name.empty()) {
      return InvalidArgument(std::string(kPrefix) + "'" + seen.internal_name +
                             "': names starting with _vsc_ are reserved for the cluster's own "
                             "state; choose another name");
    }
    VSC_RETURN_IF_ERROR(
        CheckParamCount(st, static_cast<size_t>(sqlite3_bind_parameter_count(raw))));
    if (sqlite3_stmt_isexplain(raw) != 0) return StatementKind::kRead;
    const bool readonly = sqlite3_stmt_readonly(raw) != 0;
    if (readonly && !seen.ddl) return StatementKind::kRead;
    if (sqlite3_column_count(raw) > 0) {  // a write that returns rows: RETURNING
      return InvalidArgument(std::string(kPrefix) +
                             "RETURNING is not supported: the rows it returns would have to come "
                             "back from the replicas; use last_insert_id and rows_affected of the "
                             "answer, or read the rows after the write (min_seq)");
    }
    std::string function = seen.function;
    if (function.empty() && seen.ddl) {
      const std::string lower = Lower(st.sql);
      for (std::string_view f : kNondeterministic) {
        if (MentionsCall(lower, f)) {
          function = std::string(f);
          break;
        }
      }
    }
    if (!function.empty()) {
      return InvalidArgument(std::string(kPrefix) + "function " + function +
                             "() depends on the connection, the SQLite build or the file layout "
                             "rather than on the data, so replicas would store different values; "
                             "compute the value in the statement (e.g. a subquery on the key) or "
                             "pass it as a parameter");
    }
    VSC_RETURN_IF_ERROR(CheckTimeZone(st));
    return seen.ddl ? StatementKind::kDdl : StatementKind::kWrite;
  }

  Status Run(const Statement& st, std::string_view what) {
    sqlite3_stmt* raw = nullptr;
    int rc = sqlite3_prepare_v3(db.handle(), st.sql.data(), static_cast<int>(st.sql.size()), 0,
                                &raw, nullptr);
    store::Statement holder(raw);
    for (size_t i = 0; rc == SQLITE_OK && raw != nullptr && i < st.params.size(); ++i) {
      rc = BindValue(raw, static_cast<int>(i + 1), st.params[i]);
    }
    while (rc == SQLITE_OK && raw != nullptr) {
      const int step = sqlite3_step(raw);
      if (step == SQLITE_DONE) break;
      if (step != SQLITE_ROW) rc = step;
    }
    if (rc != SQLITE_OK) {
      return InvalidArgument(std::string(what) + " '" + st.sql.substr(0, 200) +
                             "': " + sqlite3_errmsg(db.handle()));
    }
    return Status::Ok();
  }
};

Result<std::unique_ptr<SchemaMirror>> SchemaMirror::Create() {
  store::OpenOptions options;
  options.wal = false;
  options.synchronous.clear();
  VSC_ASSIGN_OR_RETURN(store::Database db, store::Database::Open(":memory:", options));
  std::unique_ptr<SchemaMirror> mirror(new SchemaMirror());
  mirror->impl_ = std::make_unique<Impl>(std::move(db));
  sqlite3_set_authorizer(mirror->impl_->db.handle(), &Impl::Authorize, mirror->impl_.get());
  return mirror;
}

SchemaMirror::~SchemaMirror() = default;

Status SchemaMirror::LoadSchema(const std::vector<std::string>& ddl) {
  impl_->SchemaChanged();
  for (const std::string& sql : ddl) {
    VSC_RETURN_IF_ERROR(impl_->Run(Statement{sql, {}}, "schema mirror: load"));
  }
  return Status::Ok();
}

Result<std::vector<std::string>> SchemaMirror::ReadSchema(const std::string& db_path) {
  store::OpenOptions options;
  options.read_only = true;
  options.synchronous.clear();
  VSC_ASSIGN_OR_RETURN(store::Database db, store::Database::Open(db_path, options));
  // Tables first (everything else refers to them), then the rest in creation order.
  VSC_ASSIGN_OR_RETURN(store::Statement st,
                       db.Prepare("SELECT sql FROM sqlite_master WHERE sql IS NOT NULL "
                                  "AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' "
                                  "AND name NOT LIKE '\\_vsc\\_%' ESCAPE '\\' "
                                  "AND tbl_name NOT LIKE '\\_vsc\\_%' ESCAPE '\\' "
                                  "ORDER BY type <> 'table', rowid"));
  std::vector<std::string> out;
  for (;;) {
    VSC_ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) break;
    out.emplace_back(st.ColumnText(0));
  }
  return out;
}

Result<StatementKind> SchemaMirror::Check(const Statement& statement) const {
  return impl_->Check(statement);
}

Result<std::vector<StatementKind>> SchemaMirror::CheckBatch(
    const std::vector<Statement>& statements) {
  if (statements.empty()) {
    return InvalidArgument(std::string(kPrefix) + "empty batch; send at least one statement");
  }
  VSC_RETURN_IF_ERROR(impl_->db.Exec("SAVEPOINT vsc_check_batch"));
  std::vector<StatementKind> kinds;
  Status failure;
  for (size_t i = 0; i < statements.size() && failure.ok(); ++i) {
    auto kind = impl_->Check(statements[i]);
    if (!kind.ok()) {
      failure = Status(kind.status().code(),
                       "statement " + std::to_string(i + 1) + ": " + kind.status().message());
    } else {
      kinds.push_back(*kind);
      if (*kind == StatementKind::kDdl) {
        impl_->schema_tentative = true;  // until the savepoint is rolled back below
        Status st = impl_->Run(statements[i], "schema mirror: apply");
        if (!st.ok()) failure = st.Annotate("statement " + std::to_string(i + 1));
      }
    }
  }
  Status undo = impl_->db.Exec("ROLLBACK TO vsc_check_batch; RELEASE vsc_check_batch");
  impl_->schema_tentative = false;
  if (!failure.ok()) return failure;
  VSC_RETURN_IF_ERROR(undo);
  return kinds;
}

Status SchemaMirror::ApplyDdl(const Statement& statement) {
  impl_->SchemaChanged();
  return impl_->Run(statement, "schema mirror: apply");
}

}  // namespace vsc::replication

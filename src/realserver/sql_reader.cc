#include "realserver/sql_reader.h"

#include <sqlite3.h>

#include <optional>

namespace vsc::realserver {
namespace {

constexpr int kProgressEvery = 1000;  // VM steps between progress-handler calls

int OnProgress(void* arg) {
  auto* budget = static_cast<int64_t*>(arg);
  *budget -= kProgressEvery;
  return *budget < 0 ? 1 : 0;  // non-zero interrupts the statement (SQLITE_INTERRUPT)
}

Status BindParam(store::Statement& st, int idx, const proto::SqlValue& v) {
  switch (v.value_case()) {
    case proto::SqlValue::kInteger:
      return st.BindInt64(idx, v.integer());
    case proto::SqlValue::kReal:
      return st.Bind(idx, v.real());
    case proto::SqlValue::kText:
      return st.Bind(idx, std::string_view(v.text()));
    case proto::SqlValue::kBlob:
      return st.Bind(idx, std::span<const uint8_t>(
                              reinterpret_cast<const uint8_t*>(v.blob().data()), v.blob().size()));
    case proto::SqlValue::kNull:
    case proto::SqlValue::VALUE_NOT_SET:
      break;
  }
  return st.Bind(idx, nullptr);
}

proto::SqlValue ColumnValue(const store::Statement& st, int col) {
  proto::SqlValue v;
  switch (st.ColumnType(col)) {
    case store::ValueType::kInteger:
      v.set_integer(st.ColumnInt64(col));
      break;
    case store::ValueType::kFloat:
      v.set_real(st.ColumnDouble(col));
      break;
    case store::ValueType::kText: {
      std::string_view t = st.ColumnText(col);
      // TEXT that is not UTF-8 cannot travel in a proto3 string; its bytes go as a blob.
      if (IsValidUtf8(t)) {
        v.set_text(std::string(t));
      } else {
        v.set_blob(std::string(t));
      }
      break;
    }
    case store::ValueType::kBlob: {
      auto b = st.ColumnBlob(col);
      v.set_blob(std::string(reinterpret_cast<const char*>(b.data()), b.size()));
      break;
    }
    case store::ValueType::kNull:
      v.set_null(true);
      break;
  }
  return v;
}

std::string Utf8OrEscaped(std::string_view s) {
  if (IsValidUtf8(s)) return std::string(s);
  std::string out;
  for (unsigned char c : s) {
    if (c < 0x80) {
      out += static_cast<char>(c);
    } else {
      static const char* kHex = "0123456789abcdef";
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

}  // namespace

bool IsValidUtf8(std::string_view s) {
  size_t i = 0;
  const size_t n = s.size();
  while (i < n) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    size_t len;
    uint32_t cp;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xE0) == 0xC0) {
      len = 2;
      cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      len = 3;
      cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      len = 4;
      cp = c & 0x07;
    } else {
      return false;
    }
    if (i + len > n) return false;
    for (size_t k = 1; k < len; ++k) {
      const unsigned char cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (cc & 0x3F);
    }
    // Overlong forms, surrogates and values past U+10FFFF are not UTF-8.
    if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
        (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) {
      return false;
    }
    i += len;
  }
  return true;
}

struct SqlReader::Impl {
  explicit Impl(store::Database d) : db(std::move(d)) {}
  store::Database db;
  SqlReaderOptions options;
  store::Statement begin;
  store::Statement commit;
  std::optional<store::Statement> applied;  // absent until the replica table exists
  int64_t budget = 0;

  // Begins the read transaction and reads applied_seq inside it.
  Result<uint64_t> BeginAndReadSeq() {
    VSC_RETURN_IF_ERROR(begin.Run());
    return ReadSeq();
  }

  Result<uint64_t> ReadSeq() {
    if (!applied) {
      auto st = db.Prepare("SELECT applied_seq FROM _vsc_replica WHERE id = 0", true);
      if (!st.ok()) return uint64_t{0};  // no entry applied yet: no replica table
      applied = std::move(st).value();
    }
    VSC_ASSIGN_OR_RETURN(bool row, applied->Step());
    uint64_t seq = row ? static_cast<uint64_t>(applied->ColumnInt64(0)) : 0;
    applied->Reset();
    return seq;
  }

  void End() {
    if (!db.autocommit()) (void)commit.Run();
  }
};

SqlReader::SqlReader(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
SqlReader::SqlReader(SqlReader&&) noexcept = default;
SqlReader& SqlReader::operator=(SqlReader&&) noexcept = default;
SqlReader::~SqlReader() = default;

Result<SqlReader> SqlReader::Open(const std::string& path, SqlReaderOptions options) {
  store::OpenOptions o;
  o.read_only = true;
  o.mmap_bytes = int64_t{256} << 20;
  o.keep_map = true;
  VSC_ASSIGN_OR_RETURN(store::Database db, store::Database::Open(path, o));
  auto impl = std::make_unique<Impl>(std::move(db));
  VSC_ASSIGN_OR_RETURN(impl->begin, impl->db.Prepare("BEGIN", true));
  VSC_ASSIGN_OR_RETURN(impl->commit, impl->db.Prepare("COMMIT", true));
  impl->options = options;
  sqlite3_progress_handler(impl->db.handle(), kProgressEvery, OnProgress, &impl->budget);
  return SqlReader(std::move(impl));
}

Result<uint64_t> SqlReader::AppliedSeq() { return impl_->ReadSeq(); }

proto::ReadResponse SqlReader::Run(const proto::ReadRequest& req, const std::string& replica_id,
                                   size_t sender_bytes) {
  Impl& m = *impl_;
  const uint64_t id = req.request_id();
  m.budget = static_cast<int64_t>(m.options.max_vm_steps);
  auto seq = m.BeginAndReadSeq();
  if (!seq.ok()) {
    m.End();
    return ReadResponseBuilder::Error(id, 0, replica_id,
                                      "replica store error: " + seq.status().message());
  }
  auto fail = [&](std::string message) {
    m.End();
    return ReadResponseBuilder::Error(id, *seq, replica_id, Utf8OrEscaped(message));
  };
  if (*seq < req.min_seq()) {
    return fail("not yet applied: at seq " + std::to_string(*seq) + ", need " +
                std::to_string(req.min_seq()) + "; retry, or read from another replica");
  }
  const std::string& sql = req.statement().sql();
  auto prepared = m.db.Prepare(sql);
  if (!prepared.ok()) return fail("sql error: " + prepared.status().message());
  store::Statement& st = *prepared;
  if (!st.readonly()) {
    return fail(
        "statement refused: it can change the database; send writes to the director's write "
        "port");
  }
  const int columns = st.ColumnCount();
  if (columns == 0) {
    return fail("statement refused: not a query (it returns no columns); send SELECT statements");
  }
  const int expected = st.BindParameterCount();
  if (req.statement().params_size() != expected) {
    return fail("statement has " + std::to_string(expected) + " parameter(s) but " +
                std::to_string(req.statement().params_size()) + " value(s) were given");
  }
  for (int i = 0; i < expected; ++i) {
    if (Status s = BindParam(st, i + 1, req.statement().params(i)); !s.ok()) {
      return fail("sql error: " + s.message());
    }
  }
  ReadResponseBuilder builder(id, *seq, replica_id, sender_bytes, m.options.max_datagram);
  std::vector<std::string> names;
  names.reserve(columns);
  for (int c = 0; c < columns; ++c) names.push_back(Utf8OrEscaped(st.ColumnName(c)));
  builder.SetColumns(std::move(names));
  for (;;) {
    auto row = st.Step();
    if (!row.ok()) {
      st.Reset();
      if (m.budget < 0) {
        return fail("query interrupted: it ran past the read budget of " +
                    std::to_string(m.options.max_vm_steps) +
                    " SQLite steps; narrow the query or use an index");
      }
      return fail("sql error: " + row.status().message());
    }
    if (!*row) break;
    proto::SqlRow r;
    for (int c = 0; c < columns; ++c) *r.add_values() = ColumnValue(st, c);
    if (!builder.AddRow(std::move(r))) break;
  }
  st.Reset();  // a statement still stepping would hold the read transaction open
  m.End();
  return builder.Finish();
}

}  // namespace vsc::realserver

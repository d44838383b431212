#include "realserver/sql_reader.h"

#include <sqlite3.h>

#include <algorithm>
#include <optional>

#include "proto/envelope.h"

namespace vsc::realserver {
namespace {

constexpr int kProgressEvery = 1000;  // VM steps between progress-handler calls
// A row larger than the page target goes in a page of its own, up to what one envelope carries.
constexpr size_t kMaxRowBytes = proto::kMaxBodyBytes - 16 * 1024;

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

// The checks every read makes before its first row: a read transaction at a position that has
// applied min_seq, one read-only query, its parameters bound. `error` is set when it failed
// (the transaction is then ended).
struct SqlReader::Prepared {
  std::optional<proto::ReadResponse> error;
  uint64_t seq = 0;
  std::optional<store::Statement> st;
  int columns = 0;
};

SqlReader::Prepared SqlReader::Begin(const proto::ReadRequest& req, const std::string& replica_id) {
  Impl& m = *impl_;
  Prepared p;
  const uint64_t id = req.request_id();
  m.budget = static_cast<int64_t>(m.options.max_vm_steps);
  auto seq = m.BeginAndReadSeq();
  if (!seq.ok()) {
    m.End();
    p.error = ReadResponseBuilder::Error(id, 0, replica_id,
                                         "replica store error: " + seq.status().message());
    return p;
  }
  p.seq = *seq;
  auto fail = [&](std::string message) {
    p.st.reset();
    m.End();
    p.error = ReadResponseBuilder::Error(id, p.seq, replica_id, Utf8OrEscaped(message));
    return std::move(p);
  };
  if (p.seq < req.min_seq()) {
    return fail("not yet applied: at seq " + std::to_string(p.seq) + ", need " +
                std::to_string(req.min_seq()) + "; retry, or read from another replica");
  }
  auto prepared = m.db.Prepare(req.statement().sql());
  if (!prepared.ok()) return fail("sql error: " + prepared.status().message());
  p.st.emplace(std::move(prepared).value());
  store::Statement& st = *p.st;
  if (!st.readonly()) {
    return fail(
        "statement refused: it can change the database; send writes to the director's write "
        "port");
  }
  p.columns = st.ColumnCount();
  if (p.columns == 0) {
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
  return p;
}

// Steps one row into `row`: true with a row, false at the end, an error message otherwise.
Result<bool> SqlReader::StepRow(Prepared& p, proto::SqlRow& row) {
  store::Statement& st = *p.st;
  auto more = st.Step();
  if (!more.ok()) {
    st.Reset();
    if (impl_->budget < 0) {
      return ResourceExhausted("query interrupted: it ran past the read budget of " +
                               std::to_string(impl_->options.max_vm_steps) +
                               " SQLite steps; narrow the query or use an index");
    }
    return more.status().Annotate("sql error");
  }
  if (!*more) return false;
  row.clear_values();
  for (int c = 0; c < p.columns; ++c) *row.add_values() = ColumnValue(st, c);
  return true;
}

std::vector<std::string> SqlReader::ColumnNames(Prepared& p) {
  std::vector<std::string> names;
  names.reserve(p.columns);
  for (int c = 0; c < p.columns; ++c) names.push_back(Utf8OrEscaped(p.st->ColumnName(c)));
  return names;
}

void SqlReader::Finish(Prepared& p) {
  if (p.st) p.st->Reset();  // a statement still stepping would hold the read transaction open
  impl_->End();
}

proto::ReadResponse SqlReader::Run(const proto::ReadRequest& req, const std::string& replica_id,
                                   size_t sender_bytes) {
  Prepared p = Begin(req, replica_id);
  if (p.error) return std::move(*p.error);
  ReadResponseBuilder builder(req.request_id(), p.seq, replica_id, sender_bytes,
                              impl_->options.max_datagram);
  builder.SetColumns(ColumnNames(p));
  for (;;) {
    proto::SqlRow r;
    auto row = StepRow(p, r);
    if (!row.ok()) {
      Finish(p);
      return ReadResponseBuilder::Error(req.request_id(), p.seq, replica_id,
                                        Utf8OrEscaped(row.status().message()));
    }
    if (!*row || !builder.AddRow(std::move(r))) break;
  }
  Finish(p);
  return builder.Finish();
}

// The pages of one query, made one per Next() from the statement Begin prepared.
class SqlReader::QueryPages : public PageSource {
 public:
  QueryPages(SqlReader& reader, const proto::ReadRequest& req, const std::string& replica_id,
             const PageLimits& limits)
      : reader_(reader),
        p_(reader.Begin(req, replica_id)),
        request_id_(req.request_id()),
        replica_id_(replica_id),
        page_bytes_(limits.page_bytes),
        max_rows_(req.max_rows() ? std::min(req.max_rows(), limits.max_rows) : limits.max_rows),
        max_bytes_(req.max_bytes() ? std::min(req.max_bytes(), limits.max_bytes)
                                   : limits.max_bytes) {}
  ~QueryPages() override {
    if (!done_) reader_.Finish(p_);
  }

  std::optional<proto::ReadResponse> Next() override {
    if (done_) return std::nullopt;
    if (p_.error) {
      done_ = true;
      return std::move(*p_.error);
    }
    proto::ReadResponse current = Page();
    if (first_) AddHeader(current);
    first_ = false;
    size_t page_bytes = 0;
    if (carry_) {
      page_bytes += carry_->ByteSizeLong() + 8;
      *current.add_rows() = std::move(*carry_);
      carry_.reset();
    }
    for (;;) {
      proto::SqlRow r;
      auto row = reader_.StepRow(p_, r);
      const size_t n = row.ok() && *row ? r.ByteSizeLong() + 8 : 0;
      std::string error = row.ok() ? CapError(n) : row.status().message();
      if (!error.empty() || !*row) {
        reader_.Finish(p_);
        done_ = true;
        if (error.empty()) return current;
        return ReadResponseBuilder::Error(request_id_, p_.seq, replica_id_, Utf8OrEscaped(error));
      }
      if (page_bytes + n > page_bytes_) {  // this row opens the next page
        carry_ = std::move(r);
        current.set_more(true);
        return current;
      }
      page_bytes += n;
      *current.add_rows() = std::move(r);
    }
  }

 private:
  proto::ReadResponse Page() const {
    proto::ReadResponse r;
    r.set_request_id(request_id_);
    r.set_ok(true);
    r.set_applied_seq(p_.seq);
    r.set_replica_id(replica_id_);
    return r;
  }

  void AddHeader(proto::ReadResponse& page) {
    for (std::string& c : reader_.ColumnNames(p_)) page.add_columns(std::move(c));
    for (int c = 0; c < p_.columns; ++c) {
      const char* decl = sqlite3_column_decltype(p_.st->handle(), c);
      page.add_decltypes(Utf8OrEscaped(decl != nullptr ? decl : ""));
      const char* table = sqlite3_column_table_name(p_.st->handle(), c);
      page.add_tables(Utf8OrEscaped(table != nullptr ? table : ""));
    }
  }

  // Counts a row of `n` bytes (0: no row) against the caps; the error when it breaks one.
  std::string CapError(size_t n) {
    if (n == 0) return {};
    ++rows_;
    bytes_ += n;
    if (rows_ > max_rows_ || bytes_ > max_bytes_) {
      return "result too large: more than " +
             (rows_ > max_rows_ ? std::to_string(max_rows_) + " rows"
                                : std::to_string(max_bytes_) + " bytes") +
             " (the configured cap); narrow the query, page it with LIMIT/OFFSET, or raise "
             "max_result_rows / max_result_bytes";
    }
    if (n > kMaxRowBytes) {
      return "a row of " + std::to_string(n) + " bytes is larger than one page can carry (" +
             std::to_string(kMaxRowBytes) + " bytes); select fewer or smaller columns";
    }
    return {};
  }

  SqlReader& reader_;
  Prepared p_;
  const uint64_t request_id_;
  const std::string replica_id_;
  const size_t page_bytes_;
  const uint64_t max_rows_;
  const uint64_t max_bytes_;
  uint64_t rows_ = 0, bytes_ = 0;
  std::optional<proto::SqlRow> carry_;  // a row that did not fit the page before
  bool first_ = true;                   // the first page also carries the column header
  bool done_ = false;
};

std::unique_ptr<PageSource> SqlReader::Paged(const proto::ReadRequest& req,
                                             const std::string& replica_id,
                                             const PageLimits& limits) {
  return std::make_unique<QueryPages>(*this, req, replica_id, limits);
}

}  // namespace vsc::realserver

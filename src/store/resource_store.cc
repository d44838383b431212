#include "store/resource_store.h"

#include <cstdint>
#include <limits>
#include <string>
#include <utility>

namespace vsc::store {
namespace {

// The whole file is mapped (a 2,000,000-record database is about 80 MiB): rows are read from
// the kernel's page cache without a copy into SQLite's own cache. Measured in
// bench/micro/store_bench.cc against the page-cache-only configuration.
constexpr int64_t kReaderMmapBytes = int64_t{1} << 32;
// The interior B-tree pages stay hot here even where mmap is unavailable.
constexpr int kReaderCacheKib = 16 * 1024;

}  // namespace

Status CreateResourceSchema(Database& db) {
  return db.Exec(
      "CREATE TABLE IF NOT EXISTS resources("
      "id INTEGER PRIMARY KEY, node TEXT NOT NULL, size INTEGER, updated_at INTEGER)");
}

Result<ResourceReader> ResourceReader::Open(const std::string& path) {
  OpenOptions options;
  options.read_only = true;
  options.synchronous.clear();
  options.mmap_bytes = kReaderMmapBytes;
  options.keep_map = true;
  options.cache_kib = kReaderCacheKib;
  Result<Database> db = Database::Open(path, options);
  if (!db.ok()) return db.status().Annotate("resource db");
  Result<Statement> by_id = db->Prepare("SELECT node FROM resources WHERE id=?1", true);
  if (!by_id.ok()) {
    return by_id.status().Annotate("resource db '" + path + "' (build one with vsc loaddb)");
  }
  VSC_ASSIGN_OR_RETURN(Statement begin, db->Prepare("BEGIN", true));
  VSC_ASSIGN_OR_RETURN(Statement commit, db->Prepare("COMMIT", true));
  return ResourceReader(std::move(*db), std::move(*by_id), std::move(begin), std::move(commit));
}

ResourceReader::ResourceReader(ResourceReader&& other) noexcept
    : db_(std::move(other.db_)),
      by_id_(std::move(other.by_id_)),
      begin_(std::move(other.begin_)),
      commit_(std::move(other.commit_)),
      in_batch_(std::exchange(other.in_batch_, false)) {}

ResourceReader& ResourceReader::operator=(ResourceReader&& other) noexcept {
  if (this != &other) {
    if (in_batch_) (void)commit_.Run();
    db_ = std::move(other.db_);
    by_id_ = std::move(other.by_id_);
    begin_ = std::move(other.begin_);
    commit_ = std::move(other.commit_);
    in_batch_ = std::exchange(other.in_batch_, false);
  }
  return *this;
}

ResourceReader::~ResourceReader() {
  if (in_batch_) (void)commit_.Run();
}

Status ResourceReader::BeginBatch() {
  if (in_batch_) return FailedPrecondition("resource lookup batch already open");
  VSC_RETURN_IF_ERROR(begin_.Run());
  in_batch_ = true;
  return Status::Ok();
}

Status ResourceReader::EndBatch() {
  if (!in_batch_) return FailedPrecondition("no resource lookup batch open");
  in_batch_ = false;
  return commit_.Run();
}

Status ResourceReader::Lookup(std::span<const uint64_t> ids, std::vector<LookupResult>& out) {
  if (ids.empty() || ids.size() > kMaxLookupIds) {
    out.clear();
    return InvalidArgument("lookup of " + std::to_string(ids.size()) +
                           " ids: a request carries 1 to " + std::to_string(kMaxLookupIds) +
                           " ids");
  }
  // One id, or inside a batch: the statement's own implicit transaction (or the batch's) is the
  // snapshot. Several ids: one explicit read transaction, which is both consistent and cheaper
  // than one implicit transaction per id (see store_bench, BM_PointPerId snapshot:0 vs 1).
  if (ids.size() == 1 || in_batch_) return LookupAll(ids, out);
  VSC_RETURN_IF_ERROR(begin_.Run());
  Status st = LookupAll(ids, out);
  Status end = commit_.Run();
  return st.ok() ? end : st;
}

Status ResourceReader::LookupAll(std::span<const uint64_t> ids, std::vector<LookupResult>& out) {
  // resize, not clear + push_back: the strings of the first entries keep their buffers.
  out.resize(ids.size());
  for (size_t i = 0; i < ids.size(); ++i) {
    LookupResult& r = out[i];
    r.id = ids[i];
    r.found = false;
    r.node.clear();
    // Rowids are signed; an id above INT64_MAX cannot be stored, so it is simply not found.
    if (ids[i] > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) continue;
    VSC_RETURN_IF_ERROR(by_id_.BindInt64(1, static_cast<int64_t>(ids[i])));
    Result<bool> row = by_id_.Step();
    if (!row.ok()) {
      by_id_.Reset();
      return row.status();
    }
    if (*row) {
      r.found = true;
      r.node.assign(by_id_.ColumnText(0));
    }
    by_id_.Reset();
  }
  return Status::Ok();
}

}  // namespace vsc::store

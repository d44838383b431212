#include "store/resource_store.h"

#include <cstdint>
#include <limits>
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
  options.cache_kib = kReaderCacheKib;
  Result<Database> db = Database::Open(path, options);
  if (!db.ok()) return db.status().Annotate("resource db");
  Result<Statement> by_id = db->Prepare("SELECT node FROM resources WHERE id=?1", true);
  if (!by_id.ok()) {
    return by_id.status().Annotate("resource db '" + path + "' (build one with vsc loaddb)");
  }
  return ResourceReader(std::move(*db), std::move(*by_id));
}

Status ResourceReader::Lookup(std::span<const uint64_t> ids, std::vector<LookupResult>& out) {
  if (ids.empty() || ids.size() > kMaxLookupIds) {
    out.clear();
    return InvalidArgument("lookup of " + std::to_string(ids.size()) +
                           " ids: a request carries 1 to " + std::to_string(kMaxLookupIds) +
                           " ids");
  }
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

#include "realserver/backup_pages.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <fstream>

#include "realserver/read_response_builder.h"
#include "realserver/snapshot.h"
#include "replication/replica_store.h"

namespace vsc::realserver {
namespace {

std::atomic<uint64_t> g_backup_counter{0};

}  // namespace

void BackupPages(const std::string& db_path, const proto::ReadRequest& request,
                 const std::string& replica_id, size_t chunk_bytes, uint64_t max_bytes,
                 const SqlReader::PageSink& emit) {
  const std::string tmp = db_path + ".backup-" + std::to_string(::getpid()) + "-" +
                          std::to_string(g_backup_counter.fetch_add(1)) + ".tmp";
  auto cleanup = [&tmp] { RemoveDatabaseFiles(tmp); };
  auto fail = [&](uint64_t seq, const std::string& error) {
    cleanup();
    emit(ReadResponseBuilder::Error(request.request_id(), seq, replica_id, error));
  };
  cleanup();
  auto state = replication::Snapshot(db_path, tmp);
  if (!state.ok()) {
    return fail(
        0, "backup failed: " + state.status().message() + "; retry, or back up another replica");
  }
  const uint64_t seq = state->applied_seq;
  if (seq < request.min_seq()) {
    return fail(seq, "not yet applied: at seq " + std::to_string(seq) + ", need " +
                         std::to_string(request.min_seq()));
  }
  std::ifstream in(tmp, std::ios::binary | std::ios::ate);
  const std::streamoff end = in ? static_cast<std::streamoff>(in.tellg()) : -1;
  if (end <= 0) return fail(seq, "backup failed: cannot read the copy " + tmp);
  const uint64_t size = static_cast<uint64_t>(end);
  const uint64_t cap = request.max_bytes() ? std::min(request.max_bytes(), max_bytes) : max_bytes;
  if (size > cap) {
    return fail(seq, "backup too large: the database is " + std::to_string(size) +
                         " bytes, more than the cap of " + std::to_string(cap) +
                         " bytes; raise max_result_bytes on the director");
  }
  in.seekg(0);
  std::string buf(std::max<size_t>(chunk_bytes, 1), '\0');
  uint64_t sent = 0;
  while (sent < size) {
    in.read(buf.data(), static_cast<std::streamsize>(std::min<uint64_t>(buf.size(), size - sent)));
    const auto n = static_cast<uint64_t>(in.gcount());
    if (n == 0) return fail(seq, "backup failed: the copy " + tmp + " ended early");
    sent += n;
    proto::ReadResponse page;
    page.set_request_id(request.request_id());
    page.set_ok(true);
    page.set_applied_seq(seq);
    page.set_replica_id(replica_id);
    page.set_file_chunk(buf.data(), n);
    page.set_file_size(size);
    page.set_more(sent < size);
    emit(std::move(page));
  }
  cleanup();
}

}  // namespace vsc::realserver

#include "realserver/backup_pages.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <optional>

#include "realserver/read_response_builder.h"
#include "realserver/snapshot.h"
#include "replication/replica_store.h"

namespace vsc::realserver {
namespace {

std::atomic<uint64_t> g_backup_counter{0};

// The pages of one copy, read from the file a chunk per Next(); the copy is removed with it.
class FilePages : public PageSource {
 public:
  FilePages(std::string tmp, std::ifstream in, uint64_t size, uint64_t seq,
            const proto::ReadRequest& request, std::string replica_id, size_t chunk_bytes)
      : tmp_(std::move(tmp)),
        in_(std::move(in)),
        size_(size),
        seq_(seq),
        request_id_(request.request_id()),
        replica_id_(std::move(replica_id)),
        buf_(std::max<size_t>(chunk_bytes, 1), '\0') {}
  ~FilePages() override { RemoveDatabaseFiles(tmp_); }

  std::optional<proto::ReadResponse> Next() override {
    if (done_) return std::nullopt;
    in_.read(buf_.data(),
             static_cast<std::streamsize>(std::min<uint64_t>(buf_.size(), size_ - sent_)));
    const auto n = static_cast<uint64_t>(in_.gcount());
    if (n == 0) {
      done_ = true;
      return ReadResponseBuilder::Error(request_id_, seq_, replica_id_,
                                        "backup failed: the copy " + tmp_ + " ended early");
    }
    sent_ += n;
    done_ = sent_ >= size_;
    proto::ReadResponse page;
    page.set_request_id(request_id_);
    page.set_ok(true);
    page.set_applied_seq(seq_);
    page.set_replica_id(replica_id_);
    page.set_file_chunk(buf_.data(), n);
    page.set_file_size(size_);
    page.set_more(!done_);
    return page;
  }

 private:
  const std::string tmp_;
  std::ifstream in_;
  const uint64_t size_;
  const uint64_t seq_;
  const uint64_t request_id_;
  const std::string replica_id_;
  std::string buf_;
  uint64_t sent_ = 0;
  bool done_ = false;
};

}  // namespace

std::unique_ptr<PageSource> BackupPages(const std::string& db_path,
                                        const proto::ReadRequest& request,
                                        const std::string& replica_id, size_t chunk_bytes,
                                        uint64_t max_bytes) {
  const std::string tmp = db_path + ".backup-" + std::to_string(::getpid()) + "-" +
                          std::to_string(g_backup_counter.fetch_add(1)) + ".tmp";
  auto fail = [&](uint64_t seq, const std::string& error) -> std::unique_ptr<PageSource> {
    RemoveDatabaseFiles(tmp);
    return std::make_unique<SinglePage>(
        ReadResponseBuilder::Error(request.request_id(), seq, replica_id, error));
  };
  RemoveDatabaseFiles(tmp);
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
  const auto size = static_cast<uint64_t>(end);
  const uint64_t cap = request.max_bytes() ? std::min(request.max_bytes(), max_bytes) : max_bytes;
  if (size > cap) {
    return fail(seq, "backup too large: the database is " + std::to_string(size) +
                         " bytes, more than the cap of " + std::to_string(cap) +
                         " bytes; raise max_result_bytes on the director");
  }
  in.seekg(0);
  return std::make_unique<FilePages>(tmp, std::move(in), size, seq, request, replica_id,
                                     chunk_bytes);
}

}  // namespace vsc::realserver

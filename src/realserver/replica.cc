#include "realserver/replica.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "net/endpoint.h"
#include "realserver/replication_wire.h"
#include "realserver/snapshot.h"
#include "replication/digest.h"

namespace vsc::realserver {
namespace {

Result<std::unique_ptr<replication::Applier>> OpenApplier(const ReplicaOptions& options) {
  auto executor = replication::OpenSqliteExecutor(options.path, options.store);
  if (!executor.ok())
    return executor.status().Annotate("opening " + options.path + " as a replica");
  auto applier = replication::Applier::Create(std::move(executor).value());
  if (!applier.ok())
    return applier.status().Annotate("loading the replica state of " + options.path);
  return std::move(applier).value();
}

// The file identity and version of `path` ("ino size mtime_ns"; "-" when absent).
std::string StatKey(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return "-";
  return std::to_string(st.st_ino) + " " + std::to_string(st.st_size) + " " +
         std::to_string(static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 +
                        st.st_mtim.tv_nsec);
}

// The content checksum of a database at applied_seq 0, computed once per content: a full scan
// takes seconds on a large database, and several servers started together on the same file (or
// one restarted) would each redo it. The result is cached next to the database, keyed by the
// identity and version of the database and WAL files (any committed write changes one of them),
// and an exclusive lock makes concurrent starters wait for the first one instead of all scanning.
Result<std::string> CachedChecksum(const std::string& path) {
  const std::string cache = path + ".vsc-checksum";
  const int lock = ::open((cache + ".lock").c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0600);
  if (lock >= 0) ::flock(lock, LOCK_EX);
  const std::string key = StatKey(path) + " | " + StatKey(path + "-wal");
  std::string cached_key, cached_sum;
  {
    std::ifstream in(cache);
    std::getline(in, cached_key);
    std::getline(in, cached_sum);
  }
  Result<std::string> sum = cached_key == key && cached_sum.size() == 64
                                ? Result<std::string>(cached_sum)
                                : replication::Checksum(path);
  if (sum.ok() && cached_key != key && key == StatKey(path) + " | " + StatKey(path + "-wal")) {
    const std::string tmp = cache + ".tmp";
    {
      std::ofstream out(tmp, std::ios::trunc);
      out << key << "\n" << *sum << "\n";
    }
    std::rename(tmp.c_str(), cache.c_str());
  }
  if (lock >= 0) ::close(lock);  // releases the lock
  return sum;
}

const Clock& ClockOf(const ReplicaOptions& options) {
  return options.clock != nullptr ? *options.clock : DefaultClock();
}

void SyncDirectoryOf(const std::string& path) {
  std::string dir = std::filesystem::path(path).parent_path().string();
  if (dir.empty()) dir = ".";
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) {
    ::fsync(fd);
    ::close(fd);
  }
}

}  // namespace

Result<FileLock> Replica::Lock(const std::string& path) {
  return FileLock::Acquire(path, "replica database",
                           "stop that server, or give this one its own copy of the database "
                           "(cp resources.db rs2.db, then --db rs2.db): two real servers on one "
                           "file apply every replicated write to it twice");
}

Result<std::unique_ptr<Replica>> Replica::Open(ReplicaOptions options, ReplicaHooks hooks) {
  // Before SQLite touches the file: a second writer would apply every replicated write again.
  VSC_ASSIGN_OR_RETURN(FileLock lock, Lock(options.path));
  return Open(std::move(options), std::move(hooks), std::move(lock));
}

Result<std::unique_ptr<Replica>> Replica::Open(ReplicaOptions options, ReplicaHooks hooks,
                                               FileLock lock) {
  VSC_ASSIGN_OR_RETURN(auto applier, OpenApplier(options));
  auto r = std::unique_ptr<Replica>(
      new Replica(std::move(options), std::move(hooks), std::move(lock), std::move(applier)));
  r->Publish();
  return r;
}

Replica::Replica(ReplicaOptions options, ReplicaHooks hooks, FileLock lock,
                 std::unique_ptr<replication::Applier> applier)
    : options_(std::move(options)),
      hooks_(std::move(hooks)),
      lock_(std::move(lock)),
      applier_(std::move(applier)),
      clock_(ClockOf(options_)),
      pacer_(options_.apply_interval, options_.max_batch) {}

Replica::~Replica() { Stop(); }

void Replica::Start(std::function<void()> on_ready) {
  thread_ = std::thread([this, on_ready = std::move(on_ready)] { Run(on_ready); });
}

void Replica::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    queue_.clear();
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Replica::Submit(uint64_t session, proto::Replicate message) {
  {
    std::lock_guard lock(mu_);
    if (stopping_) return;
    const bool was_empty = queue_.empty();
    queued_entries_ += static_cast<size_t>(message.entries_size());
    queue_.push_back(Batch{session, std::move(message)});
    // The thread sleeps with work queued only while the pacer holds it back: wake it for the
    // first batch, or when the batch is full; more entries meanwhile just join the queue.
    if (!was_empty && queued_entries_ < options_.max_batch) return;
  }
  cv_.notify_one();
}

void Replica::DropPending() {
  std::lock_guard lock(mu_);
  std::erase_if(queue_, [](const Work& w) { return std::holds_alternative<Batch>(w); });
  queued_entries_ = 0;
}

void Replica::InstallSnapshot(SnapshotSource source, std::function<void(Status)> done) {
  {
    std::lock_guard lock(mu_);
    if (stopping_) return;
    std::erase_if(queue_, [](const Work& w) { return std::holds_alternative<Batch>(w); });
    queued_entries_ = 0;
    queue_.push_back(Install{std::move(source), std::move(done)});
  }
  cv_.notify_one();
}

ReplicaPosition Replica::position() const {
  std::lock_guard lock(mu_);
  return position_;
}

void Replica::Publish() {
  std::lock_guard lock(mu_);
  if (applier_) {
    const replication::ReplicaState& s = applier_->state();
    position_.epoch = s.epoch;
    position_.applied_seq = s.applied_seq;
    position_.digest = s.digest;
    position_.fence_epoch = s.fence_epoch;
    if (s.applied_seq != 0) position_.content_checksum.clear();
  }
  position_.fenced_refusals = fenced_refusals_;
  position_.healthy = applier_ != nullptr;
  applied_seq_.store(position_.applied_seq, std::memory_order_release);
}

void Replica::Run(std::function<void()> on_ready) {
  auto compute_checksum = [this] {
    if (!applier_ || applier_->state().applied_seq != 0) return;
    auto sum = CachedChecksum(options_.path);
    std::lock_guard lock(mu_);
    if (sum.ok()) {
      position_.content_checksum = *sum;
    } else {
      position_.content_checksum.clear();
      spdlog::error("content checksum of {} failed: {}", options_.path, sum.status().ToString());
    }
  };
  compute_checksum();
  if (on_ready) on_ready();

  for (;;) {
    std::vector<Batch> batches;
    std::optional<Install> install;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      WaitForPace(lock);
      if (stopping_) return;
      if (queue_.empty()) continue;  // DropPending emptied it during the wait
      if (auto* in = std::get_if<Install>(&queue_.front())) {
        install = std::move(*in);
        queue_.pop_front();
      } else {
        size_t entries = 0;
        while (!queue_.empty() && entries < options_.max_batch) {
          auto* b = std::get_if<Batch>(&queue_.front());
          if (b == nullptr) break;
          entries += static_cast<size_t>(b->message.entries_size());
          batches.push_back(std::move(*b));
          queue_.pop_front();
        }
        queued_entries_ -= std::min(queued_entries_, entries);
        pacer_.Started(clock_.Now());
      }
    }
    if (install) {
      spdlog::info("installing a snapshot from {} ({}): {}", install->source.peer_id,
                   net::HostPort(install->source.host, install->source.port),
                   install->source.reason);
      Status s = DoInstall(install->source);
      if (s.ok()) {
        spdlog::info("snapshot from {} installed: applied_seq {}", install->source.peer_id,
                     applied_seq());
        compute_checksum();
      } else {
        spdlog::error("snapshot from {} not installed: {}", install->source.peer_id, s.ToString());
      }
      if (install->done) install->done(s);
    } else {
      ApplyBatches(batches);
    }
  }
}

void Replica::WaitForPace(std::unique_lock<std::mutex>& lock) {
  for (;;) {
    // Only batches wait: an install (always at the front once queued) and Stop go at once.
    if (stopping_ || queue_.empty() || !std::holds_alternative<Batch>(queue_.front())) return;
    const Duration delay = pacer_.Delay(clock_.Now(), queued_entries_);
    if (delay <= Duration::zero()) return;
    cv_.wait_for(lock, delay);
  }
}

void Replica::ApplyBatches(std::vector<Batch>& batches) {
  size_t i = 0;
  while (i < batches.size()) {
    // Entries of one session and epoch go into one Apply; a session change (an old session's
    // leftovers) starts another, because its ack belongs elsewhere, and so does a new epoch
    // (the director took the sequencer lease again), which is fenced on its own.
    const uint64_t session = batches[i].session;
    const uint64_t epoch = batches[i].message.epoch();
    std::vector<replication::Entry> entries;
    std::string error;
    for (;
         i < batches.size() && batches[i].session == session && batches[i].message.epoch() == epoch;
         ++i) {
      for (const auto& e : batches[i].message.entries()) {
        if (!error.empty()) break;
        auto entry = EntryFromProto(e);
        if (!entry.ok()) {
          error = entry.status().message();
          break;
        }
        entries.push_back(std::move(entry).value());
      }
    }
    proto::ReplicaAck ack = ApplyEntries(entries, epoch, error);
    if (hooks_.on_ack) hooks_.on_ack(session, std::move(ack));
  }
}

proto::ReplicaAck Replica::ApplyEntries(const std::vector<replication::Entry>& entries,
                                        uint64_t epoch, const std::string& decode_error) {
  proto::ReplicaAck ack;
  if (!applier_) {
    ack = MakeAck({}, {}, "replica store is closed: " + broken_);
    Publish();
    ack.set_applied_seq(applied_seq());
    return ack;
  }
  if (!applier_->Admits(epoch)) {
    // Refused before touching the store: a deposed director's stream. Counted and said.
    ++fenced_refusals_;
    ack = MakeAck(applier_->state(), {},
                  "refused: these entries were sent under epoch " + std::to_string(epoch) +
                      ", older than epoch " + std::to_string(applier_->state().fence_epoch) +
                      " that this replica follows; another director holds the sequencer");
    ack.set_fence_epoch(applier_->state().fence_epoch);
    Publish();
    spdlog::warn("replica: {}", ack.error());
    return ack;
  }
  auto results = applier_->Apply(entries, epoch);
  Publish();
  if (results.ok()) return MakeAck(applier_->state(), *results, decode_error);
  spdlog::warn("replicated batch of {} entries not applied: {}", entries.size(),
               results.status().ToString());
  return MakeAck(applier_->state(), {}, results.status().message());
}

Status Replica::ReopenApplier() {
  auto applier = OpenApplier(options_);
  if (!applier.ok()) {
    broken_ = applier.status().ToString();
    return applier.status();
  }
  applier_ = std::move(applier).value();
  broken_.clear();
  return Status::Ok();
}

Status Replica::DoInstall(const SnapshotSource& source) {
  const uint64_t fence = applier_ ? applier_->state().fence_epoch : 0;
  if (source.epoch < fence) {
    ++fenced_refusals_;
    Publish();
    return FailedPrecondition("refused: the snapshot order was sent under epoch " +
                              std::to_string(source.epoch) + ", older than epoch " +
                              std::to_string(fence) +
                              " that this replica follows; another director holds the sequencer");
  }
  const std::string incoming = options_.path + ".incoming";
  auto fetched = FetchSnapshot(source.host, source.port, options_.snapshot_token, incoming,
                               options_.snapshot_timeout);
  if (!fetched.ok()) {
    RemoveDatabaseFiles(incoming);
    return fetched.status();
  }
  // From here on the old database is replaced. Nothing in this process may hold it open: a
  // connection left behind would keep the old file's WAL and shared-memory index, which a
  // connection to the new file would then mix with its own pages.
  applier_.reset();
  broken_ = "installing a snapshot";
  if (hooks_.close_readers) hooks_.close_readers();
  ::unlink((options_.path + "-wal").c_str());
  ::unlink((options_.path + "-shm").c_str());
  Status renamed = Status::Ok();
  if (std::rename(incoming.c_str(), options_.path.c_str()) != 0) {
    renamed = ErrnoStatus("rename " + incoming + " to " + options_.path, errno);
    RemoveDatabaseFiles(incoming);
  } else {
    SyncDirectoryOf(options_.path);
  }
  Status reopened = ReopenApplier();
  if (hooks_.reopen_readers) hooks_.reopen_readers();
  Publish();
  VSC_RETURN_IF_ERROR(renamed);
  if (!reopened.ok()) return reopened.Annotate("reopening the installed snapshot");
  // The copy carries its peer's fence; never fall below the one this replica had.
  if (Status raised = applier_->RaiseFence(std::max(fence, source.epoch)); !raised.ok()) {
    return raised.Annotate("keeping the epoch fence after the install");
  }
  Publish();
  if (applier_->state().applied_seq != fetched->applied_seq ||
      applier_->state().digest != fetched->digest) {
    return DataLoss("installed snapshot reads back at seq " +
                    std::to_string(applier_->state().applied_seq) + " digest " +
                    replication::DigestHex(applier_->state().digest) + ", expected seq " +
                    std::to_string(fetched->applied_seq));
  }
  return Status::Ok();
}

}  // namespace vsc::realserver

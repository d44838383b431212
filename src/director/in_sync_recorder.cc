#include "director/in_sync_recorder.h"

#include <spdlog/spdlog.h>

#include "director/sequencer_lease.h"

namespace vsc::director {

InSyncRecorder::InSyncRecorder(EtcdClient client, std::string key, std::string sequencer_key,
                               OnRead on_read, OnWritten on_written)
    : client_(std::move(client)),
      key_(std::move(key)),
      sequencer_key_(std::move(sequencer_key)),
      on_read_(std::move(on_read)),
      on_written_(std::move(on_written)) {}

InSyncRecorder::~InSyncRecorder() { Stop(); }

void InSyncRecorder::Start() {
  thread_ = std::thread([this] { Run(); });
}

void InSyncRecorder::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void InSyncRecorder::Read(uint64_t epoch) {
  {
    std::lock_guard lock(mu_);
    read_epoch_ = epoch;
  }
  cv_.notify_all();
}

void InSyncRecorder::Write(const InSyncRecord& record) {
  {
    std::lock_guard lock(mu_);
    write_ = record;
  }
  cv_.notify_all();
}

Result<std::optional<InSyncRecord>> InSyncRecorder::DoRead() {
  VSC_ASSIGN_OR_RETURN(std::optional<etcd::KeyValue> kv, client_.Get(key_));
  if (!kv) return std::optional<InSyncRecord>{};
  auto record = ParseInSyncRecord(kv->value);
  if (!record.ok()) {
    return DataLoss(record.status().message() + " (" + key_ +
                    "): fix or delete the key; a promotion cannot tell which replicas hold every "
                    "acknowledged write without it");
  }
  return std::optional<InSyncRecord>{std::move(record).value()};
}

Status InSyncRecorder::DoWrite(const InSyncRecord& record) {
  if (record.epoch <= kEtcdEpochBase) {
    return FailedPrecondition("epoch " + std::to_string(record.epoch) +
                              " is not an etcd sequencer lease's");
  }
  const auto revision = static_cast<int64_t>(record.epoch - kEtcdEpochBase);
  VSC_ASSIGN_OR_RETURN(etcd::TxnResult txn, client_.PutIfCreatedAt(sequencer_key_, revision, key_,
                                                                   EncodeInSyncRecord(record)));
  if (!txn.succeeded) {
    return FailedPrecondition("etcd did not take the in-sync set: " + sequencer_key_ +
                              " is no longer the key of epoch " + std::to_string(record.epoch) +
                              " (this director no longer holds the sequencer lease)");
  }
  return Status::Ok();
}

void InSyncRecorder::Run() {
  std::unique_lock lock(mu_);
  while (true) {
    cv_.wait(lock, [this] { return stopping_ || read_epoch_ != 0 || write_.has_value(); });
    if (stopping_) return;
    if (read_epoch_ != 0) {
      const uint64_t epoch = read_epoch_;
      read_epoch_ = 0;
      lock.unlock();
      on_read_(epoch, DoRead());
    } else {
      const InSyncRecord record = std::move(*write_);
      write_.reset();
      lock.unlock();
      Status s = DoWrite(record);
      if (!s.ok()) spdlog::warn("in-sync record {}: {}", key_, s.ToString());
      on_written_(record, s);
    }
    lock.lock();
  }
}

}  // namespace vsc::director

// InSyncRecorder: the thread that keeps the in-sync record (in_sync_record.h) in etcd for the
// Replicator: reads it for a promotion, writes the active director's set.
//
// - A write is one transaction: put /vscluster/<cluster>/in_sync if the sequencer key exists
//   with the create_revision of the record's epoch (sequencer_lease.h: epoch = kEtcdEpochBase +
//   create_revision). A deposed director's write fails the compare and changes nothing; it is
//   answered as refused, naming the holder's key as etcd shows it.
// - Requests are coalesced: a write waiting behind another is replaced by a newer one (only the
//   newest set matters), and a read for an epoch is made once. Each request is made once; the
//   Replicator asks again (its tick) after a failure.
//
// Thread: its own; the two callbacks run on it (the Director posts them to the control thread).
// Lifecycle: Start → Stop (wakes and joins; at most one etcd call's timeout per endpoint).
#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "director/etcd_client.h"
#include "director/in_sync_record.h"

namespace vsc::director {

class InSyncRecorder : public InSyncStore {
 public:
  using OnRead = std::function<void(uint64_t epoch, Result<std::optional<InSyncRecord>> record)>;
  using OnWritten = std::function<void(const InSyncRecord& record, const Status& status)>;
  // `key`: /vscluster/<cluster>/in_sync; `sequencer_key`: /vscluster/<cluster>/sequencer.
  InSyncRecorder(EtcdClient client, std::string key, std::string sequencer_key, OnRead on_read,
                 OnWritten on_written);
  ~InSyncRecorder() override;

  void Start();
  void Stop();

  void Read(uint64_t epoch) override;
  void Write(const InSyncRecord& record) override;
  std::string Where() const override { return key_; }

 private:
  void Run();
  Result<std::optional<InSyncRecord>> DoRead();
  Status DoWrite(const InSyncRecord& record);

  EtcdClient client_;  // recorder thread only
  const std::string key_;
  const std::string sequencer_key_;
  OnRead on_read_;
  OnWritten on_written_;

  std::mutex mu_;  // guards what follows
  std::condition_variable cv_;
  bool stopping_ = false;
  uint64_t read_epoch_ = 0;  // a read to make, 0 none
  std::optional<InSyncRecord> write_;
  std::thread thread_;
};

}  // namespace vsc::director

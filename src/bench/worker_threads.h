// WorkerThreads: runs each load-generator worker's `Run(start, end)` on its own thread and lets
// the reporting thread wait, one progress tick at a time, until all of them have finished.
// Shared by the lookup and write benches. Start, WaitUntil and Join from one thread.
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "common/clock.h"

namespace vsc::bench {

class WorkerThreads {
 public:
  WorkerThreads() = default;
  WorkerThreads(const WorkerThreads&) = delete;
  WorkerThreads& operator=(const WorkerThreads&) = delete;
  ~WorkerThreads() { Join(); }

  // The workers must outlive Join().
  template <typename Worker>
  void Start(const std::vector<std::unique_ptr<Worker>>& workers, TimePoint start, TimePoint end) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      running_ += static_cast<int>(workers.size());
    }
    for (const auto& w : workers) {
      threads_.emplace_back([this, worker = w.get(), start, end] {
        worker->Run(start, end);
        std::lock_guard<std::mutex> lock(mu_);
        --running_;
        cv_.notify_all();
      });
    }
  }

  // Waits until `deadline` (read on `clock`) or until every worker has finished; returns true
  // when they all have.
  bool WaitUntil(const Clock& clock, TimePoint deadline) {
    std::unique_lock<std::mutex> lock(mu_);
    const Duration wait = deadline - clock.Now();
    if (wait > Duration::zero()) cv_.wait_for(lock, wait, [this] { return running_ == 0; });
    return running_ == 0;
  }

  void Join() {
    for (auto& t : threads_) {
      if (t.joinable()) t.join();
    }
    threads_.clear();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int running_ = 0;  // guarded by mu_
  std::vector<std::thread> threads_;
};

}  // namespace vsc::bench

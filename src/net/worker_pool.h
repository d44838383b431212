// WorkerPool: N worker threads, each running its own asio::io_context (DESIGN.md §4).
//
// A flow or connection is bound to one context for its whole life, so per-worker state needs no
// lock; cross-worker work goes through Post(). Threads are named "vsc-worker-N".
//
// Lifecycle: construct (contexts exist, no threads) → set up sockets on context(i) → Start()
// (one thread per context, each kept alive by a work guard) → Stop() (releases the guards and
// stops every context: handlers still queued are not run) → Join(). Owners that need a graceful
// drain stop their servers first (posting their Stop() to each context) and Stop() the pool last.
// Start() after Join() restarts the contexts. The destructor stops and joins.
// Thread safety: Start/Stop/Join from one controlling thread; Post and context() from any thread.
#pragma once

#include <asio/executor_work_guard.hpp>
#include <asio/io_context.hpp>
#include <asio/post.hpp>
#include <cstddef>
#include <functional>
#include <memory>
#include <thread>
#include <utility>
#include <vector>

namespace vsc::net {

class WorkerPool {
 public:
  // n == 0 means std::thread::hardware_concurrency() (at least 1).
  explicit WorkerPool(size_t n);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  size_t size() const { return contexts_.size(); }
  asio::io_context& context(size_t i) { return *contexts_.at(i); }

  void Start();
  void Stop();
  void Join();

  // Runs f on worker i's thread (i < size()).
  template <class F>
  void Post(size_t i, F&& f) {
    asio::post(*contexts_.at(i), std::forward<F>(f));
  }

  // Calls `done` on `home` once every worker has run every handler posted to it before this call
  // (a marker posted behind them comes back from each worker; a context runs its queue in order).
  // Never calls `done` if the pool stops first. Call from one thread, the one that posts.
  void AfterPosted(asio::io_context& home, std::function<void()> done);

 private:
  using Guard = asio::executor_work_guard<asio::io_context::executor_type>;
  std::vector<std::unique_ptr<asio::io_context>> contexts_;
  std::vector<Guard> guards_;
  std::vector<std::thread> threads_;
};

}  // namespace vsc::net

#include "net/worker_pool.h"

#include <pthread.h>

#include <string>

#include "common/logging.h"

namespace vsc::net {

WorkerPool::WorkerPool(size_t n) {
  if (n == 0) n = std::thread::hardware_concurrency();
  if (n == 0) n = 1;
  contexts_.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    // Concurrency hint 1: each context is run by exactly one thread, so Asio can skip locking.
    contexts_.push_back(std::make_unique<asio::io_context>(1));
  }
}

WorkerPool::~WorkerPool() {
  Stop();
  Join();
}

void WorkerPool::Start() {
  if (!threads_.empty()) return;
  threads_.reserve(contexts_.size());
  for (size_t i = 0; i < contexts_.size(); ++i) {
    asio::io_context& ctx = *contexts_[i];
    if (ctx.stopped()) ctx.restart();
    guards_.emplace_back(ctx.get_executor());
    threads_.emplace_back([&ctx, i] {
      std::string name = "vsc-worker-" + std::to_string(i);
      pthread_setname_np(pthread_self(), name.substr(0, 15).c_str());
      for (;;) {
        try {
          ctx.run();
          return;
        } catch (const std::exception& e) {
          // A handler that throws is a bug in that handler; the worker must survive it.
          spdlog::error("worker {}: handler threw: {}", i, e.what());
        }
      }
    });
  }
}

void WorkerPool::Stop() {
  for (auto& g : guards_) g.reset();
  guards_.clear();
  for (auto& ctx : contexts_) ctx->stop();
}

void WorkerPool::AfterPosted(asio::io_context& home, std::function<void()> done) {
  // Counted on `home` only, so the count needs no lock.
  auto left = std::make_shared<size_t>(contexts_.size());
  auto finish = std::make_shared<std::function<void()>>(std::move(done));
  if (contexts_.empty()) {
    asio::post(home, [finish] { (*finish)(); });
    return;
  }
  for (auto& ctx : contexts_) {
    asio::post(*ctx, [&home, left, finish] {
      asio::post(home, [left, finish] {
        if (--*left == 0) (*finish)();
      });
    });
  }
}

void WorkerPool::Join() {
  for (auto& t : threads_) {
    if (t.joinable()) t.join();
  }
  threads_.clear();
}

}  // namespace vsc::net

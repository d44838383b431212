#include "net/worker_pool.h"

#include <gtest/gtest.h>
#include <pthread.h>

#include <asio/executor_work_guard.hpp>
#include <asio/io_context.hpp>
#include <asio/steady_timer.hpp>
#include <atomic>
#include <chrono>
#include <future>
#include <set>
#include <string>
#include <vector>

namespace vsc::net {
namespace {

using namespace std::chrono_literals;

std::string ThreadName() {
  char name[32] = {};
  pthread_getname_np(pthread_self(), name, sizeof(name));
  return name;
}

TEST(WorkerPoolTest, ZeroMeansHardwareConcurrency) {
  WorkerPool pool(0);
  EXPECT_EQ(pool.size(), std::max(1u, std::thread::hardware_concurrency()));
}

TEST(WorkerPoolTest, EachContextRunsOnItsOwnNamedThread) {
  WorkerPool pool(3);
  ASSERT_EQ(pool.size(), 3u);
  pool.Start();
  std::vector<std::promise<std::pair<std::thread::id, std::string>>> seen(3);
  for (size_t i = 0; i < 3; ++i) {
    pool.Post(i, [&seen, i] { seen[i].set_value({std::this_thread::get_id(), ThreadName()}); });
  }
  std::set<std::thread::id> ids;
  for (size_t i = 0; i < 3; ++i) {
    auto fut = seen[i].get_future();
    ASSERT_EQ(fut.wait_for(10s), std::future_status::ready);
    auto [id, name] = fut.get();
    EXPECT_NE(id, std::this_thread::get_id());
    EXPECT_EQ(name, "vsc-worker-" + std::to_string(i));
    ids.insert(id);
  }
  EXPECT_EQ(ids.size(), 3u);
  pool.Stop();
  pool.Join();
}

TEST(WorkerPoolTest, WorkGuardKeepsIdleWorkersAliveUntilStop) {
  WorkerPool pool(2);
  pool.Start();
  // With no work queued, a context without a guard would return from run() at once; a post
  // after that would never execute.
  std::promise<void> ran;
  auto fut = ran.get_future();
  asio::steady_timer timer(pool.context(1), 20ms);
  timer.async_wait([&](const asio::error_code&) { pool.Post(1, [&] { ran.set_value(); }); });
  ASSERT_EQ(fut.wait_for(10s), std::future_status::ready);
  EXPECT_FALSE(pool.context(0).stopped());
  pool.Stop();
  pool.Join();
  EXPECT_TRUE(pool.context(0).stopped());
  EXPECT_TRUE(pool.context(1).stopped());
}

TEST(WorkerPoolTest, RestartsAfterJoin) {
  WorkerPool pool(2);
  for (int round = 0; round < 3; ++round) {
    pool.Start();
    std::atomic<int> count{0};
    std::promise<void> all;
    auto fut = all.get_future();
    for (int i = 0; i < 100; ++i) {
      pool.Post(static_cast<size_t>(i % 2), [&] {
        if (++count == 100) all.set_value();
      });
    }
    ASSERT_EQ(fut.wait_for(10s), std::future_status::ready) << "round " << round;
    pool.Stop();
    pool.Join();
  }
}

TEST(WorkerPoolTest, AfterPostedCallsBackOnceEveryWorkerRanWhatWasPostedBefore) {
  WorkerPool pool(2);
  pool.Start();
  asio::io_context home;
  auto guard = asio::make_work_guard(home);  // run_for runs its whole time, work or not
  std::promise<void> busy, release;
  std::shared_future<void> released = release.get_future().share();
  std::atomic<bool> before_ran{false};
  pool.Post(1, [&busy, released] {
    busy.set_value();
    released.wait();
  });
  pool.Post(1, [&before_ran] { before_ran = true; });
  busy.get_future().wait();
  bool done = false;
  pool.AfterPosted(home, [&] {
    EXPECT_TRUE(before_ran.load()) << "called back before worker 1 ran an earlier handler";
    done = true;
  });
  // Worker 0 is idle and answers at once; worker 1 is held: no callback yet.
  home.run_for(300ms);
  EXPECT_FALSE(done) << "called back while worker 1 had not run its queue";
  release.set_value();
  for (int i = 0; i < 1000 && !done; ++i) home.run_for(10ms);
  EXPECT_TRUE(done);
  pool.Stop();
  pool.Join();
}

}  // namespace
}  // namespace vsc::net

#include "realserver/run_queue.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <future>
#include <thread>

#include "support/temp_dir.h"
#include "support/wait_until.h"

namespace vsc::realserver {
namespace {

using namespace std::chrono_literals;

TEST(RunQueueTest, ParsesATaskList) {
  auto ids = ParseTaskIds("12\n345\n\n6\n");
  ASSERT_TRUE(ids.ok()) << ids.status().ToString();
  EXPECT_EQ(*ids, (std::vector<pid_t>{12, 345, 6}));
  EXPECT_TRUE(ParseTaskIds("")->empty());
  EXPECT_FALSE(ParseTaskIds("12\nabc\n").ok());
  EXPECT_FALSE(ParseTaskIds("12 13\n").ok());
  EXPECT_FALSE(ParseTaskIds("0\n").ok());
  EXPECT_FALSE(ParseTaskIds("-4\n").ok());
}

TEST(RunQueueTest, ReadsTheStateAfterTheLastParenthesis) {
  EXPECT_EQ(*ParseTaskState("1234 (nginx) S 1 1234 1234 0 -1"), 'S');
  // A command name may hold spaces and parentheses of its own.
  EXPECT_EQ(*ParseTaskState("77 (a) R (b)) R 1 77"), 'R');
  EXPECT_EQ(*ParseTaskState("77 (x y) D 1"), 'D');
  EXPECT_FALSE(ParseTaskState("77 nginx S").ok());
  EXPECT_FALSE(ParseTaskState("77 (nginx)").ok());
  EXPECT_FALSE(ParseTaskState("77 (nginx) ").ok());
}

TEST(RunQueueTest, RefusesWhatIsNotACgroup) {
  test_support::TempDir dir;
  auto missing = RunQueueSource::Open(dir.File("nothing-here"));
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("is not a directory"), std::string::npos);
  auto plain = RunQueueSource::Open(dir.path());
  ASSERT_FALSE(plain.ok());
  EXPECT_NE(plain.status().message().find("neither cgroup.threads nor tasks"), std::string::npos);
  std::ofstream(dir.File("tasks")) << "12\nnot-a-tid\n";
  EXPECT_FALSE(RunQueueSource::Open(dir.path()).ok());
}

TEST(RunQueueTest, DefaultsToTheNodeLoadavg) {
  auto source = RunQueueSource::Open("");
  ASSERT_TRUE(source.ok()) << source.status().ToString();
  EXPECT_TRUE(source->cgroup_dir().empty());
  EXPECT_TRUE(source->Read().ok());
}

// A cgroup-shaped directory listing real threads of this process: a spinning one (R), one
// blocked on a future (S), the reading thread itself (not counted), and a child cgroup with a
// second spinner.
TEST(RunQueueTest, CountsRunnableTasksOfTheCgroupAndItsChildren) {
  test_support::TempDir dir;
  std::atomic<bool> stop{false};
  std::atomic<pid_t> spinner{0}, child_spinner{0}, sleeper{0};
  std::promise<void> wake;
  std::thread a([&] {
    spinner = ::gettid();
    while (!stop.load()) {
    }
  });
  std::thread b([&] {
    child_spinner = ::gettid();
    while (!stop.load()) {
    }
  });
  std::thread c([&, done = wake.get_future()] {
    sleeper = ::gettid();
    done.wait();
  });
  ASSERT_TRUE(test_support::WaitUntil(
      [&] { return spinner != 0 && child_spinner != 0 && sleeper != 0; }, 5s, 1ms));
  auto state = [](pid_t tid) {
    std::ifstream in("/proc/" + std::to_string(tid) + "/stat");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    auto s = ParseTaskState(text);
    return s.ok() ? *s : '?';
  };
  ASSERT_TRUE(test_support::WaitUntil([&] { return state(sleeper) == 'S'; }, 5s, 1ms));

  std::ofstream(dir.File("tasks")) << spinner << "\n" << sleeper << "\n" << ::gettid() << "\n";
  auto source = RunQueueSource::Open(dir.path());
  ASSERT_TRUE(source.ok()) << source.status().ToString();
  EXPECT_EQ(*source->Read(), 1u);  // the spinner; not the sleeper, not this thread

  std::filesystem::create_directory(dir.File("child"));
  std::ofstream(dir.File("child/tasks")) << child_spinner << "\n";
  EXPECT_EQ(*source->Read(), 2u);

  stop = true;
  wake.set_value();
  a.join();
  b.join();
  c.join();
  EXPECT_EQ(*source->Read(), 0u);  // ended threads are no load
}

}  // namespace
}  // namespace vsc::realserver

#include "common/subprocess.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <vector>

namespace vsc {
namespace {

using std::chrono::seconds;

SpawnOptions Argv(std::vector<std::string> argv, bool new_group = false) {
  SpawnOptions options;
  options.argv = std::move(argv);
  options.new_process_group = new_group;
  return options;
}

TEST(SubprocessTest, ExitCodeAndTerminatingSignal) {
  Result<Subprocess> exited = Subprocess::Spawn(Argv({"/bin/sh", "-c", "exit 7"}));
  ASSERT_TRUE(exited.ok());
  EXPECT_EQ(exited->Wait(seconds(5)), std::optional<int>(7));
  EXPECT_EQ(exited->term_signal(), std::nullopt);
  Result<Subprocess> killed = Subprocess::Spawn(Argv({"/bin/sh", "-c", "kill -9 $$"}));
  ASSERT_TRUE(killed.ok());
  EXPECT_EQ(killed->Wait(seconds(5)), std::optional<int>(128 + 9));
  EXPECT_EQ(killed->term_signal(), std::optional<int>(9));
}

TEST(SubprocessTest, NewProcessGroupIsLedByTheChild) {
  Result<Subprocess> child = Subprocess::Spawn(Argv({"/bin/sleep", "30"}, true));
  ASSERT_TRUE(child.ok());
  EXPECT_EQ(getpgid(child->pid()), child->pid());
  EXPECT_NE(getpgid(child->pid()), getpgrp());
  ASSERT_EQ(kill(-child->pid(), SIGKILL), 0);
  EXPECT_EQ(child->Wait(seconds(5)), std::optional<int>(128 + SIGKILL));
  Result<Subprocess> same = Subprocess::Spawn(Argv({"/bin/sleep", "30"}));
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(getpgid(same->pid()), getpgrp());  // without the option: the parent's group
}

}  // namespace
}  // namespace vsc

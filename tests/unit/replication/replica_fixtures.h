// What the replica tests share: an applier over a SQLite file, opened as a real server opens its
// replica (synchronous OFF unless asked: the tests do not measure durability).
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "replication/applier.h"
#include "replication/replica_store.h"

namespace vsc::replication::testing_util {

inline std::unique_ptr<Applier> OpenReplica(const std::string& path,
                                            const std::string& sync = "OFF") {
  ReplicaOptions o;
  o.synchronous = sync;
  auto ex = OpenSqliteExecutor(path, o);
  EXPECT_TRUE(ex.ok()) << ex.status().ToString();
  if (!ex.ok()) return nullptr;
  auto a = Applier::Create(std::move(*ex));
  EXPECT_TRUE(a.ok()) << a.status().ToString();
  return a.ok() ? std::move(*a) : nullptr;
}

}  // namespace vsc::replication::testing_util

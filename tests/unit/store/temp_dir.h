// A private directory under testing::TempDir() for one test, removed with its content when the
// TempDir goes away.
#pragma once

#include <string>

namespace vsc::store::testing_util {

class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

}  // namespace vsc::store::testing_util

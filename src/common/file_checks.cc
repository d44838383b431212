#include "common/file_checks.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace vsc {

Status CheckCanCreate(const std::string& file, std::string_view what) {
  const std::filesystem::path parent = std::filesystem::path(file).parent_path();
  const std::string dir = parent.empty() ? std::string(".") : parent.string();
  if (::access(dir.c_str(), W_OK | X_OK) == 0) return Status::Ok();
  return IoError(std::string(what) + " " + file + ": cannot write in directory " + dir + ": " +
                 std::strerror(errno) + "; create it or choose another path");
}

Status CheckReadable(const std::string& file, std::string_view what) {
  if (::access(file.c_str(), R_OK) == 0) return Status::Ok();
  const int err = errno;
  if (err == ENOENT) return NotFound(std::string(what) + " " + file + " does not exist");
  return IoError(std::string(what) + " " + file + ": " + std::strerror(err));
}

}  // namespace vsc

#include "common/file_text.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/unique_fd.h"

namespace vsc {
namespace {

Status WriteFailure(const std::string& path, int err) {
  return IoError("cannot write " + path + ": " + std::strerror(err));
}

Status ReadFailure(const std::string& path, int err) {
  std::string m = "cannot read " + path + ": " + std::strerror(err);
  return err == ENOENT ? NotFound(std::move(m)) : IoError(std::move(m));
}

}  // namespace

Result<std::string> ReadFileText(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return ReadFailure(path, errno);
  std::string text;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(fd.get(), buf, sizeof(buf));
    if (n == 0) return text;
    if (n > 0) {
      text.append(buf, static_cast<size_t>(n));
    } else if (errno != EINTR) {
      return ReadFailure(path, errno);
    }
  }
}

Status WriteFileText(const std::string& path, std::string_view text) {
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (!fd.valid()) return WriteFailure(path, errno);
  while (!text.empty()) {
    const ssize_t n = ::write(fd.get(), text.data(), text.size());
    if (n >= 0) {
      text.remove_prefix(static_cast<size_t>(n));
    } else if (errno != EINTR) {
      return WriteFailure(path, errno);
    }
  }
  return Status::Ok();
}

Result<std::string_view> ProcStatFields(std::string_view stat) {
  const size_t close = stat.rfind(')');
  if (close == std::string_view::npos || close + 2 >= stat.size() || stat[close + 1] != ' ') {
    return InvalidArgument("/proc stat line: no fields after the command name");
  }
  return stat.substr(close + 2);
}

}  // namespace vsc

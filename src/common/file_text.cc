#include "common/file_text.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/unique_fd.h"

namespace vsc {
namespace {

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

Result<std::string_view> ProcStatFields(std::string_view stat) {
  const size_t close = stat.rfind(')');
  if (close == std::string_view::npos || close + 2 >= stat.size() || stat[close + 1] != ' ') {
    return InvalidArgument("/proc stat line: no fields after the command name");
  }
  return stat.substr(close + 2);
}

}  // namespace vsc

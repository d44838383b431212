#include "common/ready_file.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <fstream>

namespace vsc {

Status WriteReadyFile(const std::string& path,
                      const std::vector<std::pair<std::string, std::string>>& fields) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    if (!out) return IoError("cannot write ready file " + tmp);
    out << "{\"pid\": " << getpid();
    for (const auto& [k, v] : fields) out << ", \"" << k << "\": " << v;
    out << "}\n";
    if (!out.flush()) return IoError("cannot write ready file " + tmp);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    return ErrnoStatus("rename " + tmp + " to " + path, errno);
  }
  return Status::Ok();
}

}  // namespace vsc

#include "realserver/run_queue.h"

#include <unistd.h>

#include <charconv>
#include <filesystem>

#include "common/file_text.h"
#include "realserver/load_monitor.h"

namespace vsc::realserver {

namespace fs = std::filesystem;

Result<std::vector<pid_t>> ParseTaskIds(std::string_view text) {
  std::vector<pid_t> out;
  while (!text.empty()) {
    const size_t eol = text.find('\n');
    std::string_view line = text.substr(0, eol);
    text = eol == std::string_view::npos ? std::string_view() : text.substr(eol + 1);
    if (line.empty()) continue;
    pid_t tid = 0;
    auto [end, ec] = std::from_chars(line.data(), line.data() + line.size(), tid);
    if (ec != std::errc() || end != line.data() + line.size() || tid <= 0) {
      return InvalidArgument("task list: '" + std::string(line) + "' is not a thread id");
    }
    out.push_back(tid);
  }
  return out;
}

Result<char> ParseTaskState(std::string_view stat) {
  VSC_ASSIGN_OR_RETURN(std::string_view fields, ProcStatFields(stat));
  return fields.front();
}

Result<RunQueueSource> RunQueueSource::Open(const std::string& cgroup_dir) {
  if (cgroup_dir.empty()) {
    if (auto l = ReadLoadavg(); !l.ok()) return l.status();
    return RunQueueSource();
  }
  std::error_code ec;
  if (!fs::is_directory(cgroup_dir, ec)) {
    return NotFound("load_cgroup " + cgroup_dir +
                    " is not a directory; give a cgroup directory such as "
                    "/sys/fs/cgroup/<name> (v2) or /sys/fs/cgroup/cpu/<name> (v1)");
  }
  for (const char* name : {"cgroup.threads", "tasks"}) {
    if (!fs::exists(cgroup_dir + "/" + name, ec)) continue;
    RunQueueSource source(cgroup_dir, name);
    if (auto n = source.Read(); !n.ok()) return n.status().Annotate("load_cgroup");
    return source;
  }
  return InvalidArgument("load_cgroup " + cgroup_dir +
                         " holds neither cgroup.threads nor tasks: not a cgroup directory");
}

Result<uint32_t> RunQueueSource::Read() const {
  if (!dir_.empty()) return ReadCgroup();
  VSC_ASSIGN_OR_RETURN(LoadAvg l, ReadLoadavg());
  return l.runnable > 0 ? l.runnable - 1 : 0;  // the reader is one of them
}

Result<uint32_t> RunQueueSource::ReadCgroup() const {
  const pid_t self = ::gettid();
  uint32_t runnable = 0;
  std::vector<std::string> dirs = {dir_};
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir_, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_directory(ec)) dirs.push_back(it->path().string());
  }
  for (const std::string& d : dirs) {
    auto list = ReadFileText(d + "/" + list_name_);
    if (!list.ok()) {
      if (d == dir_) return list.status();
      continue;  // a child cgroup removed while we walked
    }
    VSC_ASSIGN_OR_RETURN(std::vector<pid_t> tids, ParseTaskIds(*list));
    for (pid_t tid : tids) {
      if (tid == self) continue;
      auto stat = ReadFileText("/proc/" + std::to_string(tid) + "/stat");
      if (!stat.ok()) continue;  // the thread ended since the list was read
      if (auto state = ParseTaskState(*stat); state.ok() && *state == 'R') ++runnable;
    }
  }
  return runnable;
}

}  // namespace vsc::realserver

#include "integration/vsc_process.h"

#include <fstream>
#include <sstream>

#include "common/subprocess.h"

namespace vsc::integration {

using namespace std::chrono_literals;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::pair<int, std::string> RunVsc(const std::vector<std::string>& args,
                                   const std::string& out_path, Duration timeout,
                                   const std::string& cwd) {
  SpawnOptions so;
  so.argv = {VSC_BINARY};
  so.argv.insert(so.argv.end(), args.begin(), args.end());
  so.log_path = out_path;
  so.cwd = cwd;
  auto proc = Subprocess::Spawn(so);
  if (!proc.ok()) return {-1, proc.status().ToString()};
  auto code = proc->Wait(timeout);
  return {code.value_or(-1), ReadFile(out_path)};
}

std::pair<int, std::string> RunAdm(const std::string& work_dir, uint16_t admin_port,
                                   const std::string& token_file,
                                   const std::vector<std::string>& args) {
  static int runs = 0;
  std::vector<std::string> argv = {"adm", "--admin", "127.0.0.1:" + std::to_string(admin_port),
                                   "--token-file", token_file};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunVsc(argv, work_dir + "/adm-" + std::to_string(++runs) + ".out", 10s);
}

}  // namespace vsc::integration

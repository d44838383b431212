// KeepalivedHost: keepalived (Debian's, VRRP only) run inside a host's network namespace of a
// NetnsTopology, from one of the example files in docs/keepalived/ rendered for the test's
// addresses and paths (issue 11). The files are used as shipped: Render only replaces literal
// strings, and fails if one of them is not in the file, so the example cannot drift away from
// what the test runs.
//
// keepalived leads a process group of its own (its VRRP child and the scripts it runs are in it);
// the destructor sends the group SIGTERM (keepalived then drops its VIPs), waits, and SIGKILLs
// what is left, so nothing survives a failed test.
#pragma once

#include <signal.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "common/subprocess.h"
#include "netns/netns_topology.h"

namespace vsc::netns {

inline constexpr const char* kKeepalived = "/usr/sbin/keepalived";

using Replacements = std::vector<std::pair<std::string, std::string>>;

// `from`'s text with every occurrence of each pair's first string replaced by its second, in
// order, written to `to` with `mode`. An error names a string that does not occur.
inline Status Render(const std::string& from, const Replacements& replacements,
                     const std::string& to, std::filesystem::perms mode) {
  std::ifstream in(from);
  if (!in) return NotFound("cannot read " + from);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  for (const auto& [what, with] : replacements) {
    size_t at = text.find(what);
    if (at == std::string::npos) return InvalidArgument(from + " has no '" + what + "'");
    for (; at != std::string::npos; at = text.find(what, at + with.size())) {
      text.replace(at, what.size(), with);
    }
  }
  std::ofstream out(to, std::ios::trunc);
  out << text;
  out.close();
  if (!out) return IoError("cannot write " + to);
  std::error_code ec;
  std::filesystem::permissions(to, mode, ec);
  if (ec) return IoError("chmod " + to + ": " + ec.message());
  return Status::Ok();
}

class KeepalivedHost {
 public:
  // Starts keepalived -P -n with `conf` in the host's namespace; its log is DIR/NAME.log.
  static Result<std::unique_ptr<KeepalivedHost>> Start(const NetnsTopology& topo,
                                                       const std::string& host,
                                                       const std::string& conf,
                                                       const std::string& dir,
                                                       const std::string& name) {
    SpawnOptions so;
    so.argv = {IpTool(),         "netns",
               "exec",           topo.Namespace(host),
               kKeepalived,      "--vrrp",
               "--dont-fork",    "--log-console",
               "--log-detail",   "--no-syslog",
               "--use-file",     conf,
               "--pid",          dir + "/" + name + ".pid",
               "--vrrp_pid",     dir + "/" + name + "-vrrp.pid",
               "--checkers_pid", dir + "/" + name + "-checkers.pid"};
    so.log_path = dir + "/" + name + ".log";
    so.new_process_group = true;
    VSC_ASSIGN_OR_RETURN(Subprocess p, Subprocess::Spawn(so));
    return std::unique_ptr<KeepalivedHost>(new KeepalivedHost(std::move(p)));
  }
  ~KeepalivedHost() { Stop(); }

  // kill -9 of keepalived and its VRRP child, as when its host dies: no priority-0 advert, and
  // the VIP stays on the host's interface.
  void Kill() {
    if (!process_) return;
    ::kill(-process_->pid(), SIGKILL);
    process_->Wait(std::chrono::seconds(5));
    process_.reset();
  }

  void Stop() {
    if (!process_) return;
    const pid_t group = process_->pid();
    ::kill(-group, SIGTERM);
    process_->Wait(std::chrono::seconds(5));
    ::kill(-group, SIGKILL);  // the VRRP child or a script, if one outlived the parent
    process_.reset();
  }

 private:
  explicit KeepalivedHost(Subprocess p) : process_(std::make_unique<Subprocess>(std::move(p))) {}
  std::unique_ptr<Subprocess> process_;
};

}  // namespace vsc::netns

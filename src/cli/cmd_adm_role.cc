// vsc adm role / vsc adm health: one line about this director and an exit code, for the
// operator and for keepalived's track scripts (issue 11, docs/keepalived/keepalived-*.conf).
// `role` exits 0 while the director sequences writes (holds the etcd sequencer lease or needs
// none), 1 while it answers but does not, 2 when it cannot be asked; `health` exits 0 while the
// director answers its admin API, 2 otherwise. Both give up after --timeout-ms, so a hung
// director fails the check within keepalived's script timeout. The classification is
// director/role_report.h.
#include <chrono>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/adm_client.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "director/role_report.h"

namespace vsc::cli {
namespace {

struct RoleOptions {
  double timeout_ms = 500;
  Duration Timeout() const {
    return std::chrono::duration_cast<Duration>(
        std::chrono::duration<double, std::milli>(timeout_ms));
  }
};

int Report(const director::RoleReport& r) {
  std::printf("%s\n", r.line.c_str());
  return r.exit_code;
}

int Role(const AdminTarget& target, const RoleOptions& o) {
  auto r = SendAdmin(target, "GET", "/v1/replication", "", o.Timeout());
  if (!r.ok()) return Report(director::Unreachable(r.status().ToString()));
  auto j = nlohmann::json::parse(r->body, nullptr, false);
  return Report(director::ReportRole(
      r->status, j.is_discarded() ? std::nullopt : std::optional<nlohmann::json>(std::move(j))));
}

int Health(const AdminTarget& target, const RoleOptions& o) {
  auto r = SendAdmin(target, "GET", "/v1/status", "", o.Timeout());
  if (!r.ok()) return Report(director::Unreachable(r.status().ToString()));
  return Report(director::ReportHealth(r->status, r->status == 200 ? "" : AnswerError(*r)));
}

}  // namespace

void AddAdmRoleCommands(CLI::App& adm, std::shared_ptr<const AdminTarget> target) {
  using Run = int (*)(const AdminTarget&, const RoleOptions&);
  auto add = [&](const char* name, const char* help, Run run) {
    auto o = std::make_shared<RoleOptions>();
    auto* cmd = adm.add_subcommand(name, help);
    AddMillisOption(cmd, "--timeout-ms", &o->timeout_ms, "give up on the director after this");
    cmd->callback([target, o, run] { ExitCode() = run(*target, *o); });
  };
  add("role",
      "whether this director sequences writes (holds the etcd sequencer lease): exit 0 yes, 1 no "
      "(the line says why), 2 cannot ask; keepalived's lease track script",
      Role);
  add("health",
      "whether this director answers its admin API: exit 0 yes, 2 no; keepalived's track script "
      "that puts the VRRP instance in FAULT when the director is gone",
      Health);
}

}  // namespace vsc::cli

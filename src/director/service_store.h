// The director's saved table of virtual services (issue 12): the running table written to
// `services_file` (TOML, service_toml.h: everything, checks and agent ids included) after
// every successful commit, and read back at start-up, so that changes made with `vsc adm`
// survive a restart as they do with ipvsadm's save-on-stop / restore-on-boot scripts.
//
// SavingServiceEditor wraps the runtime's editor. Commit writes the next table to
// `PATH.tmp` and fsyncs it *before* committing, so a full disk or a read-only directory
// refuses the change while nothing has changed; after the commit it renames the temporary
// file over PATH and fsyncs the directory. A failed write or a failed commit leaves the old
// file as it was. Control thread only, like the editor it wraps.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "director/service_editor.h"

namespace vsc::director {

// The saved table, or nullopt when `path` does not exist. An unreadable or malformed file is
// an error naming it (start-up stops rather than dropping the operator's table).
Result<std::optional<vservice::VirtualServiceTable>> LoadSavedServices(
    const std::string& path, vservice::TableLimits limits = {});

// The table a starting director runs: the saved table when `services_file` exists (the
// operator's last changes, as ipvsadm's restore-on-boot), else the [[service]] tables of the
// configuration file `config_text` (may be empty: no services).
Result<vservice::VirtualServiceTable> StartupServices(const std::string& services_file,
                                                      std::string_view config_text,
                                                      std::string_view config_origin,
                                                      vservice::TableLimits limits = {});

// `table` without the services `keys` names (the built-in entries that are never saved).
vservice::VirtualServiceTable WithoutServices(const vservice::VirtualServiceTable& table,
                                              const std::set<vservice::ServiceKey>& keys);

// SIGHUP: the configuration file's [[service]] tables become the running table, as a keepalived
// reload; Commit applies only the difference. A file that does not load changes nothing.
Result<std::vector<vservice::Change>> ReloadServices(ServiceEditor& editor,
                                                     std::string_view config_text,
                                                     std::string_view config_origin);

class SavingServiceEditor : public ForwardingServiceEditor {
 public:
  // `unsaved`: services the file leaves out (the director's built-in lookup entries, which its
  // [director] keys configure and every start declares again).
  SavingServiceEditor(ServiceEditor& inner, std::string path,
                      std::set<vservice::ServiceKey> unsaved = {})
      : ForwardingServiceEditor(inner), path_(std::move(path)), unsaved_(std::move(unsaved)) {}

  Result<std::vector<vservice::Change>> Commit(vservice::VirtualServiceTable next) override;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::set<vservice::ServiceKey> unsaved_;
};

}  // namespace vsc::director

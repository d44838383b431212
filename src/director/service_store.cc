#include "director/service_store.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "common/file_text.h"
#include "common/unique_fd.h"
#include "vservice/service_toml.h"

namespace vsc::director {
namespace {

Status WriteSynced(const std::string& path, const std::string& text) {
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (!fd.valid()) return ErrnoStatus("create " + path, errno);
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd.get(), text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoStatus("write " + path, errno);
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd.get()) != 0) return ErrnoStatus("fsync " + path, errno);
  return Status::Ok();
}

std::string TempOf(const std::string& path) { return path + ".tmp"; }

// Makes the rename durable: fsync of the directory that holds `path`.
void SyncDirectory(const std::string& path) {
  std::string dir = std::filesystem::path(path).parent_path().string();
  if (dir.empty()) dir = ".";
  UniqueFd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (fd.valid()) ::fsync(fd.get());
}

}  // namespace

Result<std::optional<vservice::VirtualServiceTable>> LoadSavedServices(
    const std::string& path, vservice::TableLimits limits) {
  auto text = ReadFileText(path);
  if (!text.ok()) {
    if (text.status().code() == Code::kNotFound) {
      return std::optional<vservice::VirtualServiceTable>();
    }
    return text.status().Annotate("saved services");
  }
  auto table = vservice::LoadServicesToml(*text, path, limits);
  if (!table.ok()) {
    return table.status().Annotate(
        "saved services (fix the file, or delete it to start from the configuration's "
        "[[service]] tables)");
  }
  return std::optional<vservice::VirtualServiceTable>(std::move(table).value());
}

Result<vservice::VirtualServiceTable> StartupServices(const std::string& services_file,
                                                      std::string_view config_text,
                                                      std::string_view config_origin,
                                                      vservice::TableLimits limits) {
  VSC_ASSIGN_OR_RETURN(auto saved, LoadSavedServices(services_file, limits));
  if (saved) {
    spdlog::info("virtual services restored from {} ({} services)", services_file,
                 saved->services().size());
    return std::move(*saved);
  }
  return vservice::LoadServicesToml(config_text, config_origin, limits);
}

vservice::VirtualServiceTable WithoutServices(const vservice::VirtualServiceTable& table,
                                              const std::set<vservice::ServiceKey>& keys) {
  vservice::VirtualServiceTable out = table;
  for (const vservice::ServiceKey& key : keys) {
    if (out.Find(key) != nullptr) (void)out.DelService(key);
  }
  return out;
}

Result<std::vector<vservice::Change>> ReloadServices(ServiceEditor& editor,
                                                     std::string_view config_text,
                                                     std::string_view config_origin) {
  VSC_ASSIGN_OR_RETURN(
      auto next, vservice::LoadServicesToml(config_text, config_origin, editor.table().limits()));
  return editor.Commit(std::move(next));
}

Result<std::vector<vservice::Change>> SavingServiceEditor::Commit(
    vservice::VirtualServiceTable next) {
  const std::string tmp = TempOf(path_);
  const std::string text = vservice::SaveServicesToml(WithoutServices(next, unsaved_));
  if (Status s = WriteSynced(tmp, text); !s.ok()) {
    ::unlink(tmp.c_str());
    return s.Annotate("saving the services table (nothing changed)");
  }
  auto changes = inner_.Commit(std::move(next));
  if (!changes.ok()) {
    ::unlink(tmp.c_str());
    return changes;
  }
  // The runtime has changed: a failed rename is logged, not reported as a failed change.
  if (std::rename(tmp.c_str(), path_.c_str()) != 0) {
    spdlog::error("services table applied but not saved: rename {} to {}: {}", tmp, path_,
                  std::strerror(errno));
    ::unlink(tmp.c_str());
  } else {
    SyncDirectory(path_);
  }
  return changes;
}

}  // namespace vsc::director

// Files of the fuzz targets (databases, logs): a per-process temporary directory removed at
// exit; spdlog is silenced when it is first made. Thread: the fuzzer's.
#pragma once

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

namespace vsc::fuzz {

inline const std::string& TempDir() {
  // Never destroyed: the exit handler that removes the directory runs after static destructors.
  static const std::string* dir = [] {
    spdlog::set_level(spdlog::level::off);  // a log line per input would dominate the run
    // tmpfs when there is one: SQLite's syncs cost nothing there, and each input opens files.
    std::string tmpl = ::access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    tmpl += "/vsc-fuzz-XXXXXX";
    if (::mkdtemp(tmpl.data()) == nullptr) std::abort();
    auto* d = new std::string(tmpl);
    std::atexit([] { std::filesystem::remove_all(TempDir()); });
    return d;
  }();
  return *dir;
}

// Removes a database file and everything SQLite and the replica keep next to it.
inline void RemoveDatabase(const std::string& path) {
  for (const char* suffix : {"", "-wal", "-shm", "-journal", ".vsc-checksum", ".vsc-checksum.lock",
                             ".vsc-checksum.tmp"}) {
    std::filesystem::remove(path + suffix);
  }
}

[[noreturn]] inline void Fail(const std::string& what) {
  std::fprintf(stderr, "fuzz fixture: %s\n", what.c_str());
  std::abort();
}

}  // namespace vsc::fuzz

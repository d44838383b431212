// Start-up checks on paths, made before a daemon binds or writes anything, so that a start-up
// that would fail half way fails at once and leaves the disk as it was. Read-only: they only
// stat and access(2).
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"

namespace vsc {

// OK when a file can be created or replaced at `file`: its directory ("." for a bare name)
// exists and is writable. Otherwise kIo: "<what> FILE: cannot write in directory DIR: ...".
Status CheckCanCreate(const std::string& file, std::string_view what);

// OK when `file` exists and is readable. Otherwise kNotFound / kIo: "<what> FILE: ...".
Status CheckReadable(const std::string& file, std::string_view what);

}  // namespace vsc

// Where the daemons and `vsc adm` find their secrets (DESIGN §12): never on the command line.
#pragma once

#include <string>

#include "common/status.h"
#include "proto/cluster_key.h"

namespace vsc::cli {

// The cluster key: from `key_file` if given, else from $VSC_CLUSTER_KEY; with neither, a
// daemon refuses to start unless `insecure`, in which case it uses the well-known all-zero key
// (so the wire format is the same, but anyone can register) and says so loudly.
Result<proto::ClusterKey> ResolveClusterKey(const std::string& key_file, bool insecure);

// The admin bearer token: from `path` if the file exists; else $VSC_ADMIN_TOKEN; else a new
// random token written to `path` (mode 0600), or to "director-admin.token" if path is empty.
Result<std::string> ResolveAdminToken(const std::string& path);

// For `vsc adm`: the token from --token-file, else $VSC_ADMIN_TOKEN, else ./director-admin.token.
Result<std::string> ReadAdminToken(const std::string& path);

}  // namespace vsc::cli

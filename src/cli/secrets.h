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

// The director's admin bearer token. `create_file` is set when the token is new: it must be
// written there (CreateAdminTokenFile) once the director has bound its sockets.
struct AdminToken {
  std::string value;
  std::string create_file;
};

// Resolves the admin token without writing anything, in the order `vsc adm` looks: the file
// `path` if it exists; else $VSC_ADMIN_TOKEN; else "director-admin.token" if path is empty and
// that file exists; else a new random token for `path` (or "director-admin.token"), whose
// directory must be writable. An existing file is kept as it is, so the token stays the same
// across restarts (scripts and Prometheus scrape configs keep working).
Result<AdminToken> ResolveAdminToken(const std::string& path);

// Writes a new token's file (mode 0600, O_EXCL: an existing file is never replaced). No-op when
// the token needs no file.
Status CreateAdminTokenFile(const AdminToken& token);

// For `vsc adm`: the token from --token-file, else $VSC_ADMIN_TOKEN, else ./director-admin.token.
Result<std::string> ReadAdminToken(const std::string& path);

}  // namespace vsc::cli

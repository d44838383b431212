// The cluster key: 32 secret bytes shared by the director and every RS; it authenticates every
// control, heartbeat, replication and write message (DESIGN.md §12, envelope.h).
//
// Loaded from a file or the environment, never from the command line. Nothing here logs or
// formats the key, and no error message quotes any part of it; Hex() exists only to write it
// out. The bytes are wiped when the object is destroyed. Immutable after construction, so a
// const ClusterKey may be shared between threads.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "common/status.h"

namespace vsc::proto {

class ClusterKey {
 public:
  static constexpr size_t kBytes = 32;

  // Reads a key file holding either exactly 32 raw bytes or 64 hex digits (surrounding
  // whitespace allowed). Like ssh with a private key, refuses a file whose mode grants any
  // access to group or others (FailedPrecondition, naming the chmod to run), and anything that is
  // not a regular file. Missing file: NotFound; bad content: InvalidArgument.
  static Result<ClusterKey> FromFile(const std::string& path);

  // Parses 64 hex digits from the environment variable. Unset or empty: NotFound.
  static Result<ClusterKey> FromEnv(const char* var = "VSC_CLUSTER_KEY");

  // 64 hex digits (either case), surrounding whitespace allowed.
  static Result<ClusterKey> FromHex(std::string_view hex);

  static ClusterKey FromBytes(std::span<const uint8_t, kBytes> bytes);

  // A fresh key from OpenSSL's CSPRNG. Internal if the generator fails.
  static Result<ClusterKey> Generate();

  ClusterKey(const ClusterKey&) = default;
  ClusterKey& operator=(const ClusterKey&) = default;
  ~ClusterKey();

  // Creates path with mode 0600 holding Hex() and a newline. Refuses to replace an existing file
  // (AlreadyExists): overwriting a cluster key silently would split the cluster.
  Status WriteFile(const std::string& path) const;

  // 64 lowercase hex digits. For writing the key out; never log it.
  std::string Hex() const;

  std::span<const uint8_t, kBytes> bytes() const { return bytes_; }

  // Constant-time comparison.
  bool operator==(const ClusterKey& other) const;

 private:
  ClusterKey() = default;
  std::array<uint8_t, kBytes> bytes_{};
};

}  // namespace vsc::proto

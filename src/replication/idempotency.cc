#include "replication/idempotency.h"

#include <string>

namespace vsc::replication {

Status ValidateIdempotencyKey(std::string_view key) {
  if (key.empty()) {
    return InvalidArgument(
        "idempotency key refused: it is empty; send a non-empty key (e.g. a UUID) or none");
  }
  if (key.size() > kMaxIdempotencyKeyBytes) {
    return InvalidArgument("idempotency key refused: it is " + std::to_string(key.size()) +
                           " bytes, over the limit of " + std::to_string(kMaxIdempotencyKeyBytes) +
                           "; send a shorter key (e.g. a UUID)");
  }
  for (size_t i = 0; i < key.size(); ++i) {
    const auto c = static_cast<unsigned char>(key[i]);
    if (c < 0x20 || c > 0x7e) {
      return InvalidArgument("idempotency key refused: byte " + std::to_string(i + 1) +
                             " is not printable ASCII; use letters, digits and punctuation");
    }
  }
  return Status::Ok();
}

uint64_t OldestRemembered(uint64_t seq, uint64_t window) {
  return seq > window ? seq - window + 1 : 0;
}

bool WithinWindow(uint64_t recorded_seq, uint64_t seq, uint64_t window) {
  return recorded_seq >= OldestRemembered(seq, window);
}

}  // namespace vsc::replication

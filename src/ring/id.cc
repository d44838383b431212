#include "ring/id.h"

#include <openssl/evp.h>

#include <cstdio>
#include <cstdlib>

namespace vsc::ring {

RingId HashId(std::string_view bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), digest, &len, EVP_sha1(), nullptr) != 1 || len < 8) {
    // Only a broken OpenSSL installation gets here; a wrong id would silently misroute keys.
    std::fprintf(stderr, "vsc: OpenSSL SHA-1 failed; check the libcrypto installation\n");
    std::abort();
  }
  RingId id = 0;
  for (int i = 0; i < 8; ++i) id = (id << 8) | digest[i];
  return id;
}

std::string IdHex(RingId id) {
  char buf[19];
  std::snprintf(buf, sizeof buf, "0x%016llx", static_cast<unsigned long long>(id));
  return buf;
}

}  // namespace vsc::ring

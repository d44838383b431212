#include "ring/id.h"

#include <openssl/evp.h>

#include <cstdio>
#include <cstdlib>

namespace vsc::ring {

namespace {

// Fetched once and shared (an EVP_MD is safe to use from any thread once fetched): EVP_sha1()
// would look the implementation up again on every call, which triples the cost of a hash.
const EVP_MD* Sha1() {
  static const EVP_MD* const md = EVP_MD_fetch(nullptr, "SHA1", nullptr);
  return md;
}

}  // namespace

RingId HashId(std::string_view bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  const EVP_MD* md = Sha1();
  if (md == nullptr || EVP_Digest(bytes.data(), bytes.size(), digest, &len, md, nullptr) != 1 ||
      len < 8) {
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

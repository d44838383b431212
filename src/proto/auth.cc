#include "proto/auth.h"

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>

#include <cstdio>
#include <cstdlib>
#include <utility>

namespace vsc::proto {
namespace {

[[noreturn]] void Die(const char* what) {
  std::fprintf(stderr, "vsc: OpenSSL HMAC-SHA256 failed: %s\n", what);
  std::abort();
}

// Fetching an algorithm walks the provider tables; do it once per process.
EVP_MAC* HmacAlgorithm() {
  static EVP_MAC* const mac = [] {
    EVP_MAC* m = EVP_MAC_fetch(nullptr, "HMAC", nullptr);
    if (m == nullptr) Die("EVP_MAC_fetch(HMAC)");
    return m;
  }();
  return mac;
}

}  // namespace

HmacSha256::HmacSha256(const ClusterKey& key) {
  ctx_ = EVP_MAC_CTX_new(HmacAlgorithm());
  if (ctx_ == nullptr) Die("EVP_MAC_CTX_new");
  char digest[] = "SHA256";
  const OSSL_PARAM params[] = {
      OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0),
      OSSL_PARAM_construct_end(),
  };
  const auto bytes = key.bytes();
  if (EVP_MAC_init(ctx_, bytes.data(), bytes.size(), params) != 1) Die("EVP_MAC_init");
}

HmacSha256::HmacSha256(HmacSha256&& other) noexcept : ctx_(std::exchange(other.ctx_, nullptr)) {}

HmacSha256& HmacSha256::operator=(HmacSha256&& other) noexcept {
  if (this != &other) {
    EVP_MAC_CTX_free(ctx_);
    ctx_ = std::exchange(other.ctx_, nullptr);
  }
  return *this;
}

HmacSha256::~HmacSha256() { EVP_MAC_CTX_free(ctx_); }

HmacSha256::Tag HmacSha256::Compute(std::span<const uint8_t> data) {
  if (ctx_ == nullptr) std::abort();  // used after move
  // A null key re-initialises with the key given at construction (OpenSSL 3 HMAC provider).
  if (EVP_MAC_init(ctx_, nullptr, 0, nullptr) != 1) Die("EVP_MAC_init (re-init)");
  if (EVP_MAC_update(ctx_, data.data(), data.size()) != 1) Die("EVP_MAC_update");
  Tag tag;
  size_t len = 0;
  if (EVP_MAC_final(ctx_, tag.data(), &len, tag.size()) != 1 || len != tag.size()) {
    Die("EVP_MAC_final");
  }
  return tag;
}

bool HmacSha256::Verify(std::span<const uint8_t> data, std::span<const uint8_t, kTagBytes> tag) {
  const Tag expected = Compute(data);
  return CRYPTO_memcmp(expected.data(), tag.data(), kTagBytes) == 0;
}

ReplayGuard::ReplayGuard(size_t max_senders) : max_senders_(max_senders == 0 ? 1 : max_senders) {}

Status ReplayGuard::Accept(std::string_view sender, uint64_t counter) {
  auto it = windows_.find(sender);
  if (it == windows_.end()) {
    if (windows_.size() >= max_senders_) {
      windows_.erase(lru_.back());
      lru_.pop_back();
      ++evictions_;
    }
    lru_.emplace_front(sender);
    windows_.emplace(lru_.front(), Window{counter, 1, lru_.begin()});
    return Status::Ok();
  }
  Window& w = it->second;
  if (counter > w.highest) {
    const uint64_t shift = counter - w.highest;
    w.seen = shift >= kWindow ? 1 : (w.seen << shift) | 1;
    w.highest = counter;
  } else {
    const uint64_t behind = w.highest - counter;
    if (behind >= kWindow) {
      return Unauthenticated("message from " + std::string(sender) + " refused: counter " +
                             std::to_string(counter) + " is " + std::to_string(behind) +
                             " below the highest accepted, outside the replay window of " +
                             std::to_string(kWindow));
    }
    const uint64_t bit = uint64_t{1} << behind;
    if ((w.seen & bit) != 0) {
      return Unauthenticated("message from " + std::string(sender) + " refused: counter " +
                             std::to_string(counter) + " was accepted before (replay)");
    }
    w.seen |= bit;
  }
  lru_.splice(lru_.begin(), lru_, w.lru);
  return Status::Ok();
}

void ReplayGuard::Forget(std::string_view sender) {
  auto it = windows_.find(sender);
  if (it == windows_.end()) return;
  lru_.erase(it->second.lru);
  windows_.erase(it);
}

CounterSource::CounterSource(int64_t wall_micros)
    : next_(wall_micros < 0 ? 0 : static_cast<uint64_t>(wall_micros)) {}

uint64_t CounterSource::Next() { return next_.fetch_add(1, std::memory_order_relaxed); }

}  // namespace vsc::proto

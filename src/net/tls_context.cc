#include "net/tls_context.h"

#include <openssl/err.h>
#include <openssl/pem.h>

#include <asio/ssl/context.hpp>
#include <cerrno>
#include <cstring>
#include <fstream>

namespace vsc::net {
namespace {

// OpenSSL's reason for the last failure ("no start line", "key values mismatch"), cleared.
std::string LastSslError(const asio::error_code& ec) {
  unsigned long e = ERR_peek_last_error();
  ERR_clear_error();
  if (e == 0) return ec.message();
  char text[256];
  ERR_error_string_n(e, text, sizeof(text));
  return text;
}

Status CheckReadable(const std::string& path, const std::string& key) {
  if (path.empty()) {
    return InvalidArgument(key + " is empty: set it to a PEM file");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return IoError(key + " " + path + " cannot be read: " + std::strerror(errno) +
                   "; give a readable PEM file");
  }
  return Status::Ok();
}

}  // namespace

TlsServerContext::TlsServerContext(std::unique_ptr<asio::ssl::context> c)
    : context_(std::move(c)) {}

TlsServerContext::~TlsServerContext() = default;

Result<std::shared_ptr<TlsServerContext>> TlsServerContext::Load(const std::string& cert_file,
                                                                 const std::string& key_file,
                                                                 const std::string& cert_key,
                                                                 const std::string& key_key) {
  VSC_RETURN_IF_ERROR(CheckReadable(cert_file, cert_key));
  VSC_RETURN_IF_ERROR(CheckReadable(key_file, key_key));
  auto c = std::make_unique<asio::ssl::context>(asio::ssl::context::tls_server);
  // TLS 1.2 and later only; no compression (CRIME), one DH key per handshake.
  c->set_options(asio::ssl::context::default_workarounds | asio::ssl::context::no_sslv2 |
                 asio::ssl::context::no_sslv3 | asio::ssl::context::no_tlsv1 |
                 asio::ssl::context::no_tlsv1_1 | asio::ssl::context::no_compression |
                 asio::ssl::context::single_dh_use);
  asio::error_code ec;
  c->use_certificate_chain_file(cert_file, ec);
  if (ec) {
    return InvalidArgument(cert_key + " " + cert_file + " is not a PEM certificate (" +
                           LastSslError(ec) + "); give the server's certificate chain in PEM");
  }
  // The key is read here rather than by use_private_key_file, to tell a file that holds no
  // key from a key of another certificate; an encrypted key fails instead of prompting.
  EVP_PKEY* key = nullptr;
  if (BIO* bio = BIO_new_file(key_file.c_str(), "r")) {
    key = PEM_read_bio_PrivateKey(
        bio, nullptr, [](char*, int, int, void*) { return 0; }, nullptr);
    BIO_free(bio);
  }
  if (key == nullptr) {
    return InvalidArgument(key_key + " " + key_file + " is not an unencrypted PEM private key (" +
                           LastSslError(ec) + "); give the certificate's key in PEM");
  }
  const bool matches = SSL_CTX_use_PrivateKey(c->native_handle(), key) == 1 &&
                       SSL_CTX_check_private_key(c->native_handle()) == 1;
  EVP_PKEY_free(key);
  if (!matches) {
    return InvalidArgument(key_key + " " + key_file + " does not belong to the certificate in " +
                           cert_key + " " + cert_file + " (" + LastSslError(ec) +
                           "); give the key the certificate was made for");
  }
  return std::shared_ptr<TlsServerContext>(new TlsServerContext(std::move(c)));
}

}  // namespace vsc::net

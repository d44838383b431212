// TlsServerContext: a TLS server's certificate chain and private key (OpenSSL through
// asio::ssl), loaded once at start-up and shared by every connection of one HttpServer.
//
// Load() reads the two PEM files and checks that the key belongs to the certificate; it writes
// nothing. Failure is kInvalidArgument (or kIo for an unreadable file) naming the file, the
// config key that set it and what to do. The context is immutable after Load() and may be used
// by connections on any thread. This header stays free of OpenSSL and asio/ssl: only the code
// that runs the handshake includes them.
#pragma once

#include <memory>
#include <string>

#include "common/status.h"

namespace asio::ssl {
class context;
}

namespace vsc::net {

class TlsServerContext {
 public:
  // `cert_key` / `key_key`: the names of the settings the paths came from, for the messages
  // ("http_cert").
  static Result<std::shared_ptr<TlsServerContext>> Load(const std::string& cert_file,
                                                        const std::string& key_file,
                                                        const std::string& cert_key = "cert",
                                                        const std::string& key_key = "key");
  ~TlsServerContext();
  TlsServerContext(const TlsServerContext&) = delete;
  TlsServerContext& operator=(const TlsServerContext&) = delete;

  asio::ssl::context& context() { return *context_; }

 private:
  explicit TlsServerContext(std::unique_ptr<asio::ssl::context> c);
  std::unique_ptr<asio::ssl::context> context_;
};

}  // namespace vsc::net

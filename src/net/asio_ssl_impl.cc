// Asio's non-template TLS code (asio::ssl over OpenSSL), compiled once like asio_impl.cc. A
// file of its own in vsc_asio, so that only programs that use TLS link this object.
#include <asio/ssl/impl/src.hpp>

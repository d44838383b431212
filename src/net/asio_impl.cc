// Asio's non-template code, compiled once for the whole program (ASIO_SEPARATE_COMPILATION,
// set on the vsc_asio target in the top-level CMakeLists.txt).
#include <asio/impl/src.hpp>

#include "common/status.h"

#include <cstring>
#include <string>

namespace vsc {

std::string_view CodeName(Code code) {
  switch (code) {
    case Code::kOk: return "ok";
    case Code::kInvalidArgument: return "invalid argument";
    case Code::kNotFound: return "not found";
    case Code::kAlreadyExists: return "already exists";
    case Code::kUnauthenticated: return "unauthenticated";
    case Code::kResourceExhausted: return "overloaded";
    case Code::kUnavailable: return "unavailable";
    case Code::kFailedPrecondition: return "failed precondition";
    case Code::kDataLoss: return "data loss";
    case Code::kIo: return "i/o error";
    case Code::kInternal: return "internal error";
  }
  return "unknown";
}

std::string Status::ToString() const {
  if (ok()) return "ok";
  std::string s(CodeName(code_));
  s += ": ";
  s += message_;
  return s;
}

Status Status::Annotate(std::string_view context) const {
  if (ok()) return *this;
  std::string m(context);
  m += ": ";
  m += message_;
  return Status(code_, std::move(m));
}

Status ErrnoStatus(std::string_view what, int err) {
  std::string m(what);
  m += ": ";
  m += std::strerror(err);
  return IoError(std::move(m));
}

}  // namespace vsc

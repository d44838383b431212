// Status and Result<T>: the error values used at every module boundary.
//
// A Status is a code plus a message a person can act on ("statement refused: more than one
// statement in request; send one statement per request"). Result<T> holds either a T or a
// non-OK Status. Both are cheap to move; an OK Status carries no allocation.
#pragma once

#include <cassert>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace vsc {

enum class Code : int {
  kOk = 0,
  kInvalidArgument,    // the caller's input is malformed or out of range
  kNotFound,           // the thing named does not exist
  kAlreadyExists,      // the thing named exists already
  kUnauthenticated,    // missing or wrong cluster key / token / HMAC
  kResourceExhausted,  // a bounded queue or window is full: "overloaded"
  kUnavailable,        // no live peer can take the request right now
  kFailedPrecondition, // the system is not in a state that allows the request
  kDataLoss,           // stored data is corrupt or diverged
  kIo,                 // an operating-system call failed
  kInternal,           // a bug: an invariant did not hold
};

std::string_view CodeName(Code code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Code code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }

  // "invalid argument: <message>"
  std::string ToString() const;

  // Prefixes the message with context: "loading key file: <message>".
  Status Annotate(std::string_view context) const;

 private:
  Code code_ = Code::kOk;
  std::string message_;
};

inline Status InvalidArgument(std::string m) { return {Code::kInvalidArgument, std::move(m)}; }
inline Status NotFound(std::string m) { return {Code::kNotFound, std::move(m)}; }
inline Status AlreadyExists(std::string m) { return {Code::kAlreadyExists, std::move(m)}; }
inline Status Unauthenticated(std::string m) { return {Code::kUnauthenticated, std::move(m)}; }
inline Status ResourceExhausted(std::string m) { return {Code::kResourceExhausted, std::move(m)}; }
inline Status Unavailable(std::string m) { return {Code::kUnavailable, std::move(m)}; }
inline Status FailedPrecondition(std::string m) {
  return {Code::kFailedPrecondition, std::move(m)};
}
inline Status DataLoss(std::string m) { return {Code::kDataLoss, std::move(m)}; }
inline Status IoError(std::string m) { return {Code::kIo, std::move(m)}; }
inline Status Internal(std::string m) { return {Code::kInternal, std::move(m)}; }

// IoError from errno, with the call that failed: "bind 127.0.0.1:80: Address already in use".
Status ErrnoStatus(std::string_view what, int err);

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT: implicit on purpose
  Result(Status status) : v_(std::move(status)) {  // NOLINT
    assert(!std::get<Status>(v_).ok() && "Result built from an OK Status");
  }

  bool ok() const { return std::holds_alternative<T>(v_); }
  explicit operator bool() const { return ok(); }

  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(v_);
  }
  T& value() & { return Checked(); }
  const T& value() const& { return const_cast<Result*>(this)->Checked(); }
  T&& value() && { return std::move(Checked()); }
  T* operator->() { return &Checked(); }
  const T* operator->() const { return &const_cast<Result*>(this)->Checked(); }
  T& operator*() & { return Checked(); }
  const T& operator*() const& { return const_cast<Result*>(this)->Checked(); }

 private:
  T& Checked() {
    if (!ok()) std::abort();  // using the value of a failed Result is a bug
    return std::get<T>(v_);
  }
  std::variant<T, Status> v_;
};

}  // namespace vsc

// Returns the Status from the enclosing function when `expr` is not OK.
#define VSC_RETURN_IF_ERROR(expr)            \
  do {                                       \
    ::vsc::Status vsc_status_ = (expr);      \
    if (!vsc_status_.ok()) return vsc_status_; \
  } while (0)

#define VSC_CONCAT_INNER(a, b) a##b
#define VSC_CONCAT(a, b) VSC_CONCAT_INNER(a, b)
// `VSC_ASSIGN_OR_RETURN(auto x, Foo());` declares x from a Result or returns its Status.
#define VSC_ASSIGN_OR_RETURN(decl, expr)                                  \
  auto VSC_CONCAT(vsc_result_, __LINE__) = (expr);                        \
  if (!VSC_CONCAT(vsc_result_, __LINE__).ok())                            \
    return VSC_CONCAT(vsc_result_, __LINE__).status();                    \
  decl = std::move(VSC_CONCAT(vsc_result_, __LINE__)).value()

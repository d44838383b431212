// `vsc sql --param VALUE`: one bound parameter of the statement, from the command line.
//
//   42, -7            an integer (optional '-', digits, within int64)
//   1.5, 2e10         a real (a number that is not an integer; finite)
//   null              SQL NULL
//   @PATH             a BLOB: the bytes of the file PATH
//   int:V real:V      V as that type, refused when it is not one
//   text:V            V as TEXT, whatever it looks like ("text:null", "text:42", "text:@x")
//   hex:HEX           a BLOB from hex digits ("hex:" alone is the empty BLOB)
//   @@REST            the TEXT "@REST" (a leading '@' doubled)
//   anything else     TEXT as written (it must be valid UTF-8; bytes go in a file with @PATH)
//
// Parameters bind in order to ?1..?N (a `?`, `?NNN` or `:name` takes the position of its first
// appearance: the native protocol binds by position only). Pure apart from the file reader the
// caller passes; thread safe.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "common/status.h"
#include "proto/replication.pb.h"

namespace vsc::client {

// Reads a whole file for @PATH: its bytes, or an error naming the path.
using FileReader = std::function<Result<std::string>(const std::string& path)>;

// InvalidArgument saying what is wrong with `arg` and how to write it.
Result<proto::SqlValue> ParseParam(std::string_view arg, const FileReader& read_file);

// The real file reader, refusing files over `max_bytes` (a write request's payload limit).
FileReader DiskFileReader(size_t max_bytes);

}  // namespace vsc::client

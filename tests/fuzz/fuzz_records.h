// The input of the fuzz targets that replay a conversation (messages on sessions, time passing):
// a sequence of records `u8 op | u16 length, big endian | length bytes`. An incomplete last
// record ends the input. fuzz_seeds.cc writes seeds in this form with AppendRecord.
// ParseMessage reads a record's bytes as a protobuf message.
#pragma once

#include <google/protobuf/message_lite.h>
#include <google/protobuf/stubs/logging.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace vsc::fuzz {

struct Record {
  uint8_t op = 0;
  std::string_view bytes;
};

class RecordReader {
 public:
  RecordReader(const uint8_t* data, size_t size) : in_(reinterpret_cast<const char*>(data), size) {}
  bool Next(Record& r) {
    if (in_.size() < 3) return false;
    r.op = static_cast<uint8_t>(in_[0]);
    const size_t n =
        static_cast<size_t>(static_cast<uint8_t>(in_[1])) << 8 | static_cast<uint8_t>(in_[2]);
    in_.remove_prefix(3);
    if (n > in_.size()) return false;
    r.bytes = in_.substr(0, n);
    in_.remove_prefix(n);
    return true;
  }

 private:
  std::string_view in_;
};

inline void AppendRecord(std::string& out, uint8_t op, std::string_view bytes) {
  out.push_back(static_cast<char>(op));
  out.push_back(static_cast<char>(bytes.size() >> 8));
  out.push_back(static_cast<char>(bytes.size() & 0xff));
  out.append(bytes.substr(0, 0xffff));
}

// A record's bytes as a little number (time steps, row counts): 0 when empty.
inline uint32_t Small(std::string_view bytes) {
  uint32_t v = 0;
  for (size_t i = 0; i < bytes.size() && i < 2; ++i) v = v << 8 | static_cast<uint8_t>(bytes[i]);
  return v;
}

// Parses a protobuf message from fuzzed bytes, without protobuf's log line for every string
// field that is not UTF-8 (the message is refused all the same).
inline bool ParseMessage(std::string_view bytes, google::protobuf::MessageLite& m) {
  static google::protobuf::LogSilencer* silencer = new google::protobuf::LogSilencer;
  (void)silencer;
  return m.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()));
}

}  // namespace vsc::fuzz

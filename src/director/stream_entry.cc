#include "director/stream_entry.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/wire_format_lite.h>

#include "director/replication_wire.h"
#include "proto/control.pb.h"

namespace vsc::director {
namespace {

using google::protobuf::internal::WireFormatLite;
using google::protobuf::io::CodedOutputStream;

void PutVarint(std::string& out, uint64_t v) {
  uint8_t buf[10];
  uint8_t* end = CodedOutputStream::WriteVarint64ToArray(v, buf);
  out.append(reinterpret_cast<const char*>(buf), static_cast<size_t>(end - buf));
}

void PutTag(std::string& out, int field, WireFormatLite::WireType type) {
  PutVarint(out, WireFormatLite::MakeTag(field, type));
}

size_t TagBytes(int field) {
  return CodedOutputStream::VarintSize32(
      WireFormatLite::MakeTag(field, WireFormatLite::WIRETYPE_LENGTH_DELIMITED));
}

// A proto3 scalar is serialized only when it is not zero.
size_t UintFieldBytes(int field, uint64_t v) {
  return v == 0 ? 0 : TagBytes(field) + CodedOutputStream::VarintSize64(v);
}

void PutUintField(std::string& out, int field, uint64_t v) {
  if (v == 0) return;
  PutTag(out, field, WireFormatLite::WIRETYPE_VARINT);
  PutVarint(out, v);
}

}  // namespace

StreamEntryPtr MakeStreamEntry(replication::Entry entry) {
  auto out = std::make_shared<StreamEntry>();
  proto::LogEntry le;
  ToProto(entry, &le);
  le.SerializeToString(&out->wire);
  out->payload_bytes = replication::PayloadBytes(entry);
  out->entry = std::move(entry);
  return out;
}

void EncodeReplicate(std::span<const StreamEntryPtr> entries, uint64_t head_seq, uint64_t epoch,
                     std::string& out) {
  constexpr int kEntries = proto::Replicate::kEntriesFieldNumber;
  constexpr int kReplicate = proto::Message::kReplicateFieldNumber;
  size_t body = UintFieldBytes(proto::Replicate::kHeadSeqFieldNumber, head_seq) +
                UintFieldBytes(proto::Replicate::kEpochFieldNumber, epoch);
  for (const StreamEntryPtr& e : entries) {
    body += TagBytes(kEntries) + CodedOutputStream::VarintSize64(e->wire.size()) + e->wire.size();
  }
  out.clear();
  out.reserve(TagBytes(kReplicate) + CodedOutputStream::VarintSize64(body) + body);
  PutTag(out, kReplicate, WireFormatLite::WIRETYPE_LENGTH_DELIMITED);
  PutVarint(out, body);
  for (const StreamEntryPtr& e : entries) {
    PutTag(out, kEntries, WireFormatLite::WIRETYPE_LENGTH_DELIMITED);
    PutVarint(out, e->wire.size());
    out.append(e->wire);
  }
  PutUintField(out, proto::Replicate::kHeadSeqFieldNumber, head_seq);
  PutUintField(out, proto::Replicate::kEpochFieldNumber, epoch);
}

}  // namespace vsc::director

#include "realserver/read_response_builder.h"

#include <google/protobuf/io/coded_stream.h>

#include "proto/envelope.h"

namespace vsc::realserver {
namespace {

using google::protobuf::io::CodedOutputStream;

// A length-delimited field: tag, length varint, payload. Message.read_response is field 16
// (a two-byte tag); ReadResponse.rows is field 5 (one byte).
size_t FieldBytes(size_t tag_bytes, size_t payload) {
  return tag_bytes + CodedOutputStream::VarintSize64(payload) + payload;
}

constexpr size_t kMaxErrorBytes = 2048;

}  // namespace

size_t SealedReadResponseSize(size_t sender_bytes, size_t response_bytes) {
  return proto::kEnvelopeFixedBytes + sender_bytes + FieldBytes(2, response_bytes);
}

ReadResponseBuilder::ReadResponseBuilder(uint64_t request_id, uint64_t applied_seq,
                                         std::string replica_id, size_t sender_bytes,
                                         size_t max_datagram, uint64_t count_cap)
    : sender_bytes_(sender_bytes), max_datagram_(max_datagram), count_cap_(count_cap) {
  response_.set_request_id(request_id);
  response_.set_ok(true);
  response_.set_applied_seq(applied_seq);
  response_.set_replica_id(std::move(replica_id));
  base_bytes_ = response_.ByteSizeLong();
}

void ReadResponseBuilder::SetColumns(std::vector<std::string> columns) {
  for (auto& c : columns) response_.add_columns(std::move(c));
  response_.clear_rows();
  rows_bytes_ = 0;
  base_bytes_ = response_.ByteSizeLong();
}

size_t ReadResponseBuilder::SealedSize(size_t rows_bytes) const {
  return SealedReadResponseSize(sender_bytes_, base_bytes_ + rows_bytes);
}

bool ReadResponseBuilder::AddRow(proto::SqlRow row) {
  ++rows_seen_;
  if (overflowed_) return rows_seen_ < count_cap_;
  const size_t row_bytes = FieldBytes(1, row.ByteSizeLong());
  if (SealedSize(rows_bytes_ + row_bytes) > max_datagram_) {
    overflowed_ = true;
    response_.clear_rows();  // what was kept is of no use now
    return rows_seen_ < count_cap_;
  }
  rows_bytes_ += row_bytes;
  *response_.add_rows() = std::move(row);
  return true;
}

proto::ReadResponse ReadResponseBuilder::Finish() {
  if (!overflowed_) return std::move(response_);
  const std::string count =
      count_capped() ? "at least " + std::to_string(rows_seen_) : std::to_string(rows_seen_);
  return Error(response_.request_id(), response_.applied_seq(), response_.replica_id(),
               "result too large for one datagram (" + count +
                   " rows); narrow the query or use LIMIT");
}

proto::ReadResponse ReadResponseBuilder::Error(uint64_t request_id, uint64_t applied_seq,
                                               const std::string& replica_id, std::string error) {
  proto::ReadResponse r;
  r.set_request_id(request_id);
  r.set_ok(false);
  if (error.size() > kMaxErrorBytes) {
    size_t cut = kMaxErrorBytes;
    // Cut on a UTF-8 boundary: a proto3 string must stay valid UTF-8 or the client cannot parse it.
    while (cut > 0 && (static_cast<unsigned char>(error[cut]) & 0xC0) == 0x80) --cut;
    error.resize(cut);
    error += "...";
  }
  r.set_error(std::move(error));
  r.set_applied_seq(applied_seq);
  r.set_replica_id(replica_id);
  return r;
}

}  // namespace vsc::realserver

// Fuzzes write requests from the write port (WriteServer opens the envelope, then hands the
// WriteRequest to Replicator::Submit): the size limits, the schema mirror's checks
// (replication/mirror.h), sequencing, group commit and the answer, with one honest in-sync
// replica (testing::FakeReplica) so accepted writes commit. DDL that is sequenced changes the
// mirror, so later statements of the same input see the new schema.
// Record ops (fuzz_records.h): op even: a WriteRequest (bytes); op odd: the event loop runs and
// the replica acks what it was sent.
// Invariants: a refusal is answered at once, with ok=false, a negative code and a message, and
// sequences nothing; an accepted write is answered once, after the replica acked, with ok=true
// and the next seq (a retry of an idempotency key: the first's seq); every write is answered
// exactly once.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "director_fixture.h"
#include "fuzz_records.h"

namespace {

struct Answer {
  int calls = 0;
  vsc::proto::WriteResponse response;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  vsc::fuzz::DirectorFixture f;
  vsc::testing::FakeReplica replica;
  replica.id = "rs1";
  replica.content_checksum = vsc::fuzz::DirectorFixture::BootChecksum();
  f.Join(replica);
  std::vector<std::unique_ptr<Answer>> answers;
  std::vector<size_t> accepted;   // indexes into answers, in submission order
  std::vector<std::string> keys;  // each answer's request's idempotency key
  auto deliver = [&] {
    f.Poll();
    if (auto ack = replica.Apply()) f.rep().OnAck(replica.id, *ack);
    if (replica.gaps != 0) std::abort();
  };

  vsc::fuzz::RecordReader in(data, size);
  vsc::fuzz::Record rec;
  for (int steps = 0; steps < 32 && in.Next(rec); ++steps) {
    if (rec.op & 1) {
      deliver();
      continue;
    }
    vsc::proto::WriteRequest req;
    if (!vsc::fuzz::ParseMessage(rec.bytes, req)) continue;
    answers.push_back(std::make_unique<Answer>());
    keys.push_back(req.idempotency_key());
    Answer* a = answers.back().get();
    f.rep().Submit(req, [a](const vsc::proto::WriteResponse& r) {
      a->calls++;
      a->response = r;
    });
    if (a->calls == 0) {
      accepted.push_back(answers.size() - 1);
      continue;
    }
    const auto& r = a->response;
    if (r.ok() || r.code() >= 0 || r.error().empty() || r.request_id() != req.request_id()) {
      std::abort();  // a refusal must say so
    }
  }
  for (int i = 0; i < 64 && (i < 2 || replica.applied < f.rep().last_seq()); ++i) deliver();
  // Keyed writes (issue 11): the first of a key is applied; a later one (joined to it, or
  // sequenced and found a duplicate by the replica) answers with the first's seq.
  std::map<std::string, uint64_t> first_seq;
  uint64_t last = 0;
  for (size_t i = 0; i < accepted.size(); ++i) {
    const Answer& a = *answers[accepted[i]];
    if (a.calls != 1 || !a.response.ok()) std::abort();
    const std::string& key = keys[accepted[i]];
    if (auto it = first_seq.find(key); !key.empty() && it != first_seq.end()) {
      if (a.response.seq() != it->second) std::abort();
      continue;
    }
    if (a.response.duplicate() || a.response.seq() <= last) std::abort();
    last = a.response.seq();
    if (!key.empty()) first_seq[key] = last;
  }
  f.rep().Stop();
  f.Poll();
  for (const auto& a : answers) {
    if (a->calls != 1) std::abort();
  }
  return 0;
}

// Fuzzes the director's handlers behind the control-session envelope: registration (the
// replicator's admission, then the control plane), replica acks, deregistration and session
// close, heartbeats into membership, writes and verification in between, with time passing.
// The socket loop itself (ControlServer::Session) only dispatches on the message kind; this
// target drives the same calls in the same order (replicator.h "Registration, in this order"),
// on four sessions whose senders are rs0..rs3. Each session has an honest replica behind it
// (testing::FakeReplica) that the input can ask to apply and ack what it was sent, so commits,
// catch-up and verification are reachable, not only refusals.
//
// Record ops (fuzz_records.h): session = op & 3, action = (op >> 2) % 7:
//   0 a control Message on the session     1 a heartbeat datagram (a Message) from the sender
//   2 the session's replica acks honestly  3 the session closes
//   4 a WriteRequest on the write port     5 time passes (bytes: ms), Tick, the loop runs
//   6 vsc adm verify
// Invariants: every write is answered exactly once (at the latest when the director stops), an
// ok answer names a sequenced seq of this epoch, the commit point never passes the log's head,
// and the published view lists each server once, sorted by id.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "director_fixture.h"
#include "fuzz_records.h"

namespace {

using vsc::director::Admission;
using vsc::testing::FakeReplica;

struct Session {
  std::string sender;
  bool open = true;
  bool registered = false;
  uint64_t incarnation = 0;
  uint64_t number = 0;  // the control session's number (ControlServer never reuses one)
  FakeReplica replica;  // its link is the session's
};

class Harness {
 public:
  Harness() {
    for (int i = 0; i < 4; ++i) {
      sessions_[i].sender = "rs" + std::to_string(i);
      sessions_[i].number = ++next_session_;
    }
  }

  void OnControl(Session& s, const vsc::proto::Message& m) {
    if (m.has_register_()) {
      const vsc::proto::Register& reg = m.register_();
      if (reg.id() != s.sender) return Close(s);  // one server per session, speaking for itself
      const Admission admission = f_.rep().Admit(reg);
      const auto ack =
          f_.plane().OnRegister(reg, s.number, 7101, f_.clock().Now(), admission.needs_catch_up());
      if (!ack.accepted()) return Close(s);
      if (s.registered) f_.rep().Detach(s.sender, s.replica.link.get());
      s.registered = true;
      s.incarnation = reg.incarnation();
      s.replica = FakeReplica{};
      s.replica.id = s.sender;
      s.replica.applied = reg.applied_seq();
      if (auto d = vsc::replication::DigestFromBytes(reg.digest()); d.ok()) s.replica.digest = *d;
      f_.rep().Attach(reg, admission, s.replica.link);
    } else if (m.has_replica_ack()) {
      if (s.registered) f_.rep().OnAck(s.sender, m.replica_ack());
    } else if (m.has_deregister()) {
      Close(s);
    }
  }

  void Close(Session& s) {
    if (s.registered) {
      f_.rep().Detach(s.sender, s.replica.link.get());
      f_.plane().OnSessionClosed(s.sender, s.number, f_.clock().Now());
    }
    s.open = false;
    s.registered = false;
  }

  void Write(std::string_view bytes) {
    vsc::proto::WriteRequest req;
    if (!vsc::fuzz::ParseMessage(bytes, req)) return;
    const size_t i = answers_.size();
    answers_.push_back(0);
    f_.rep().Submit(req, [this, i](const vsc::proto::WriteResponse& r) {
      answers_[i]++;
      if (r.ok() && (r.seq() == 0 || r.seq() > f_.rep().last_seq())) std::abort();
    });
  }

  void Step(const vsc::fuzz::Record& rec) {
    Session& s = sessions_[rec.op & 3];
    vsc::proto::Message m;
    switch ((rec.op >> 2) % 7) {
      case 0:
        if (s.open && vsc::fuzz::ParseMessage(rec.bytes, m)) OnControl(s, m);
        break;
      case 1:
        if (vsc::fuzz::ParseMessage(rec.bytes, m) && m.has_heartbeat() &&
            m.heartbeat().id() == s.sender) {
          f_.plane().OnHeartbeat(m.heartbeat(), f_.clock().Now());
        }
        break;
      case 2:
        if (s.registered) {
          s.replica.rows = vsc::fuzz::Small(rec.bytes) % 4;
          if (auto ack = s.replica.Apply()) f_.rep().OnAck(s.sender, *ack);
        }
        break;
      case 3:
        if (s.open) Close(s);
        s.open = true;  // the server reconnects on a new session
        s.number = ++next_session_;
        break;
      case 4:
        Write(rec.bytes);
        break;
      case 5:
        f_.clock().Advance(std::chrono::milliseconds(vsc::fuzz::Small(rec.bytes)));
        for (const std::string& id : f_.plane().Tick(f_.clock().Now())) {
          for (Session& down : sessions_) {
            if (down.sender == id && down.open) Close(down);  // the director closes it
          }
        }
        f_.Poll();
        break;
      case 6:
        (void)f_.rep().StartVerify();
        break;
    }
    Check();
  }

  void Check() {
    const auto st = f_.rep().GetStatus();
    if (st.committed_seq > st.last_seq) std::abort();
    const auto view = f_.plane().BuildView();
    for (const auto& servers : view->services) {
      for (size_t i = 1; i < servers.size(); ++i) {
        if (!(servers[i - 1].id < servers[i].id)) std::abort();
      }
    }
  }

  void Finish() {
    f_.Poll();
    f_.rep().Stop();
    f_.Poll();
    for (int n : answers_) {
      if (n != 1) std::abort();  // a writer answered never or twice
    }
  }

 private:
  std::vector<int> answers_;  // calls of each write's callback; outlives the replicator
  vsc::fuzz::DirectorFixture f_;
  Session sessions_[4];
  uint64_t next_session_ = 0;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Harness h;
  vsc::fuzz::RecordReader in(data, size);
  vsc::fuzz::Record rec;
  for (int steps = 0; steps < 64 && in.Next(rec); ++steps) h.Step(rec);
  h.Finish();
  return 0;
}

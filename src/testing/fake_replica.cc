#include "testing/fake_replica.h"

#include <sqlite3.h>

#include <cstdio>
#include <cstdlib>
#include <utility>

#include "director/replication_wire.h"
#include "replication/digest.h"

namespace vsc::testing {

std::vector<proto::Message> FakeLink::Take() { return std::exchange(sent, {}); }

void FakeLink::SendEncoded(std::string_view message) {
  proto::Message m;
  if (!m.ParseFromArray(message.data(), static_cast<int>(message.size()))) {
    std::fprintf(stderr, "FakeLink: the director sent %zu bytes that are not a proto::Message\n",
                 message.size());
    std::abort();
  }
  sent.push_back(std::move(m));
}

proto::Register FakeReplica::Register() const {
  proto::Register r;
  r.set_id(id);
  r.set_incarnation(incarnation);
  r.set_weight(1);
  auto add = [&](const char* service, uint32_t port) {
    auto* e = r.add_endpoints();
    e->set_service(service);
    e->set_host(host);
    e->set_port(port);
  };
  add("lookup-udp", 9000);
  add("sql-udp", sql_udp_port);
  add("http", 9002);
  r.add_capabilities("sql");
  r.set_applied_seq(applied);
  r.set_digest(std::string(reinterpret_cast<const char*>(digest.data()), digest.size()));
  r.set_content_checksum(content_checksum);
  for (const std::string& sql : schema) r.add_schema(sql);
  return r;
}

proto::Heartbeat FakeReplica::Heartbeat() {
  proto::Heartbeat h;
  h.set_id(id);
  h.set_incarnation(incarnation);
  h.set_counter(++hb_counter);
  return h;
}

std::optional<proto::ReplicaAck> FakeReplica::Apply() {
  proto::ReplicaAck ack;
  bool any = false;
  for (const proto::Message& m : link->Take()) {
    if (!m.has_replicate()) continue;
    for (const proto::LogEntry& le : m.replicate().entries()) {
      if (le.seq() <= applied) continue;
      if (le.seq() != applied + 1) gaps++;
      replication::Entry e = director::FromProto(le);
      replication::EntryResult res;
      res.seq = e.seq;
      if (e.kind == replication::Entry::Kind::kChecksum) {
        res.checksum = checksum;
      } else if (auto k = keys.find(e.idempotency_key); k != keys.end()) {
        res.rows_changed = rows;
        res.duplicate_of = k->second;
      } else {
        res.rows_changed = rows;
        if (!e.idempotency_key.empty()) keys[e.idempotency_key] = e.seq;
      }
      digest = replication::NextDigest(digest, e, res);
      applied = e.seq;
      auto* o = ack.add_outcomes();
      o->set_seq(res.seq);
      o->set_code(res.code);
      o->set_rows_changed(res.rows_changed);
      o->set_checksum(res.checksum);
      o->set_duplicate_of(res.duplicate_of);
      any = true;
    }
  }
  if (!any) return std::nullopt;
  ack.set_applied_seq(applied);
  ack.set_digest(std::string(reinterpret_cast<const char*>(digest.data()), digest.size()));
  return ack;
}

size_t FakeReplica::EntriesQueued() const {
  size_t n = 0;
  for (const auto& m : link->sent) n += m.has_replicate() ? m.replicate().entries_size() : 0;
  return n;
}

std::optional<proto::InstallSnapshot> FakeReplica::SnapshotOrder() const {
  for (const auto& m : link->sent) {
    if (m.has_install_snapshot()) return m.install_snapshot();
  }
  return std::nullopt;
}

void MakeBootstrap(const std::string& path) {
  sqlite3* db = nullptr;
  if (sqlite3_open(path.c_str(), &db) != SQLITE_OK ||
      sqlite3_exec(db,
                   "CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT);"
                   "INSERT INTO t VALUES (1, 'one');",
                   nullptr, nullptr, nullptr) != SQLITE_OK) {
    std::fprintf(stderr, "cannot write the bootstrap database %s: %s\n", path.c_str(),
                 db ? sqlite3_errmsg(db) : "out of memory");
    std::abort();
  }
  sqlite3_close(db);
}

}  // namespace vsc::testing

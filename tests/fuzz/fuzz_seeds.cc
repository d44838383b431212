// fuzz_seeds DIR: writes the seed corpora of the fuzz targets whose inputs are built from
// messages (DIR/<target>/<seed>), each with the project's real encoders: protobuf messages,
// EncodeStatements, ConfigTable::ToToml, ClusterKey::Hex, the snapshot answer (SnapshotCopy)
// gives. `make fuzz-seeds` runs it over tests/fuzz/corpus; the seeds are committed.
#include <array>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "common/config.h"
#include "config_values.h"
#include "director/replication_wire.h"
#include "director/sync_codec.h"
#include "director_fixture.h"
#include "fuzz_records.h"
#include "fuzz_temp.h"
#include "net/http_response.h"
#include "proto/cluster_key.h"
#include "proto/control.pb.h"
#include "realserver/snapshot.h"
#include "replication/applier.h"
#include "replication/entry_codec.h"
#include "replication/replica_store.h"
#include "testing/fake_replica.h"
#include "vservice/ipvsadm_rules.h"
#include "vservice/service_json.h"

namespace {

using vsc::fuzz::AppendRecord;
using vsc::replication::Statement;
using vsc::replication::Value;

std::string g_dir;

void Write(const std::string& target, const std::string& name, const std::string& bytes) {
  const std::string dir = g_dir + "/" + target;
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/" + name, std::ios::binary) << bytes;
}

std::string Msg(const google::protobuf::MessageLite& m) { return m.SerializeAsString(); }

vsc::proto::SqlStatement Sql(const std::string& sql, std::vector<Value> params = {}) {
  vsc::proto::SqlStatement s;
  vsc::director::ToProto(Statement{sql, std::move(params)}, &s);
  return s;
}

vsc::proto::WriteRequest Write1(uint64_t id, const std::string& sql, std::vector<Value> p = {}) {
  vsc::proto::WriteRequest w;
  w.set_request_id(id);
  *w.add_statements() = Sql(sql, std::move(p));
  return w;
}

std::string MessageOf(const vsc::proto::Register& r) {
  vsc::proto::Message m;
  *m.mutable_register_() = r;
  return Msg(m);
}

std::string MessageOf(const vsc::proto::Heartbeat& h) {
  vsc::proto::Message m;
  *m.mutable_heartbeat() = h;
  return Msg(m);
}

void KeySeeds() {
  std::array<uint8_t, 32> b;
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<uint8_t>(i * 7 + 3);
  const std::string hex = vsc::proto::ClusterKey::FromBytes(b).Hex();
  Write("cluster_key_fuzz", "hex", hex);
  Write("cluster_key_fuzz", "hex_newline", hex + "\n");
  std::string upper = hex;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  Write("cluster_key_fuzz", "upper_spaces", " \t" + upper + "\r\n");
  Write("cluster_key_fuzz", "not_hex", hex.substr(0, 63) + "g");
  Write("cluster_key_fuzz", "short", hex.substr(0, 40));
}

void ConfigSeeds() {
  vsc::fuzz::ConfigValues v;
  v.s = "text with \"quotes\" and \\";
  v.i = -1234567890123;
  v.u32 = 4000000000u;
  v.u16 = 65535;
  v.d = 0.1;
  v.b = true;
  vsc::ConfigTable t("fuzz");
  v.Bind(t);
  Write("config_fuzz", "print_config", t.ToToml());
  Write("config_fuzz", "top_level", "s = 'literal'\nd = 1e300\nb = false\nu16 = 0\n");
  Write("config_fuzz", "section_floats", "[fuzz]\nd = 0.123456789012345\ni = 0x7fffffffffffffff\n");
  Write("config_fuzz", "inf_nan", "[fuzz]\nd = -inf\ns = \"\\u00e9\\n\\t\"\n");
}

void SplitterSeeds() {
  Write("sql_splitter_fuzz", "statements",
        std::string(1, '\x05') +
            "SELECT 1; INSERT INTO t VALUES('a;b', \"c;\", `d;`, [e;f]); -- x;\n"
            "/* ; */ UPDATE t SET v = 1 WHERE id = 2;\n;; SELECT 'unterminated");
  Write("sql_splitter_fuzz", "comments_only", std::string(1, '\x11') + "-- one;\n/* two; */ ;");
  Write("sql_splitter_fuzz", "with_pragma",
        std::string(1, '\x02') + "WITH x AS (SELECT 1) SELECT * FROM x; PRAGMA user_version = 3;");
}

void StatementSeeds() {
  using vsc::replication::EncodeStatements;
  Write("statements_fuzz", "one",
        EncodeStatements({{"INSERT INTO t(v) VALUES (?1)", {Value::Text("x")}}}));
  Write("statements_fuzz", "every_kind",
        EncodeStatements({{"INSERT INTO t VALUES (?1, ?2, ?3, ?4, ?5)",
                           {Value::Null(), Value::Int(-7), Value::Real(2.5), Value::Text("t"),
                            Value::Blob(std::string("\0\xff", 2))}},
                          {"DELETE FROM t", {}}}));
  Write("statements_fuzz", "empty", EncodeStatements({}));
}

// The answer a real server gives for a real replica database: its head alone for
// snapshot_head_fuzz, the whole answer for snapshot_install_fuzz.
void SnapshotSeeds() {
  const std::string db = vsc::fuzz::TempDir() + "/snap.db";
  {
    auto ex = vsc::replication::OpenSqliteExecutor(db, {});
    auto applier = vsc::replication::Applier::Create(std::move(ex).value());
    vsc::replication::Entry e;
    e.epoch = 2;
    e.seq = 1;
    e.statements = {{"CREATE TABLE t(id INTEGER PRIMARY KEY)", {}}};
    (void)(*applier)->Apply(std::span<const vsc::replication::Entry>(&e, 1));
  }
  vsc::net::HttpRequest req;
  req.method = "GET";
  req.path = req.target = vsc::realserver::kSnapshotPath;
  auto copy = vsc::realserver::SnapshotCopy::Make(db);
  if (!copy.ok()) return;
  std::string body;
  {
    std::ifstream in(copy->path(), std::ios::binary);
    body.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  vsc::net::HttpResponse ok = copy->Head();
  Write("snapshot_head_fuzz", "ok", vsc::net::SerializeHead(ok, copy->size(), false));
  Write("snapshot_head_fuzz", "unauthorized",
        vsc::net::SerializeResponse(*vsc::realserver::RefuseSnapshotRequest(req, "token"), false,
                                    false));
  for (auto& [name, value] : ok.headers) {
    if (name == "X-Vsc-Digest") value[5] = 'G';
  }
  Write("snapshot_install_fuzz", "ok",
        vsc::net::SerializeHead(copy->Head(), copy->size(), false) + body);
  Write("snapshot_head_fuzz", "bad_digest", vsc::net::SerializeHead(ok, copy->size(), false));
  Write("snapshot_install_fuzz", "bad_digest",
        vsc::net::SerializeHead(ok, copy->size(), false) + body);
}

vsc::testing::FakeReplica Replica(const std::string& id) {
  vsc::testing::FakeReplica r;
  r.id = id;
  r.content_checksum = vsc::fuzz::DirectorFixture::BootChecksum();
  return r;
}

void HeartbeatSeeds() {
  // ops: sender | action << 2 (0 register, 1 heartbeat, 2 close, 3 time)
  auto a = Replica("rs0"), b = Replica("rs1");
  std::string s;
  AppendRecord(s, 0 | 0 << 2, Msg(a.Register()));
  AppendRecord(s, 1 | 0 << 2, Msg(b.Register()));
  vsc::proto::Heartbeat h = a.Heartbeat();
  h.mutable_load()->set_run_queue(1.5);
  h.mutable_load()->set_response_ms(120);
  AppendRecord(s, 0 | 1 << 2, Msg(h));
  AppendRecord(s, 1 | 1 << 2, Msg(b.Heartbeat()));
  AppendRecord(s, 0 | 3 << 2, std::string("\x00\xc8", 2));  // 200 ms
  AppendRecord(s, 0 | 1 << 2, Msg(h));                      // replayed
  AppendRecord(s, 0 | 3 << 2, std::string("\x02\x00", 2));  // 512 ms: rs1 goes DOWN
  vsc::proto::Heartbeat full = b.Heartbeat();
  full.set_flags(vsc::proto::Heartbeat::FLAG_FULL);
  AppendRecord(s, 1 | 1 << 2, Msg(full));
  AppendRecord(s, 0 | 2 << 2, "");
  Write("heartbeat_fuzz", "two_servers", s);
}

void SessionSeeds() {
  // ops: session | action << 2 (0 control, 1 heartbeat, 2 honest ack, 3 close, 4 write,
  // 5 time, 6 verify)
  auto a = Replica("rs0"), b = Replica("rs1");
  std::string s;
  AppendRecord(s, 0 | 0 << 2, MessageOf(a.Register()));
  AppendRecord(s, 0 | 1 << 2, MessageOf(a.Heartbeat()));
  AppendRecord(s, 1 | 0 << 2, MessageOf(b.Register()));
  AppendRecord(s, 1 | 1 << 2, MessageOf(b.Heartbeat()));
  AppendRecord(s, 0 | 4 << 2, Msg(Write1(1, "INSERT INTO t(v) VALUES (?1)", {Value::Text("two")})));
  AppendRecord(s, 0 | 5 << 2, std::string("\x00\x01", 2));
  AppendRecord(s, 0 | 2 << 2, "");
  AppendRecord(s, 1 | 2 << 2, "");
  AppendRecord(s, 0 | 6 << 2, "");
  AppendRecord(s, 0 | 5 << 2, std::string("\x00\x01", 2));
  AppendRecord(s, 0 | 2 << 2, "");
  AppendRecord(s, 1 | 3 << 2, "");
  AppendRecord(s, 0 | 4 << 2, Msg(Write1(2, "UPDATE t SET v = 'x' WHERE id = 1")));
  AppendRecord(s, 0 | 5 << 2, std::string("\x00\x01", 2));
  AppendRecord(s, 0 | 2 << 2, "");
  AppendRecord(s, 1 | 0 << 2, MessageOf(b.Register()));  // rs1 returns behind: catch-up
  AppendRecord(s, 1 | 2 << 2, "");
  vsc::proto::Message bye;
  bye.mutable_deregister()->set_id("rs0");
  AppendRecord(s, 0 | 0 << 2, Msg(bye));
  Write("control_session_fuzz", "two_replicas", s);

  std::string lie;
  AppendRecord(lie, 2 | 0 << 2, MessageOf(Replica("rs2").Register()));
  vsc::proto::Message ack;
  ack.mutable_replica_ack()->set_applied_seq(5);
  ack.mutable_replica_ack()->set_digest(std::string(32, 'd'));
  AppendRecord(lie, 2 | 0 << 2, Msg(ack));
  AppendRecord(lie, 2 | 4 << 2, Msg(Write1(3, "DELETE FROM t")));
  Write("control_session_fuzz", "forged_ack", lie);
}

void WriteSeeds() {
  std::string s;
  AppendRecord(s, 0, Msg(Write1(1, "INSERT INTO t(v) VALUES (?1)", {Value::Text("a")})));
  AppendRecord(s, 0, Msg(Write1(2, "CREATE TABLE u(k TEXT PRIMARY KEY, n INTEGER DEFAULT 0)")));
  AppendRecord(s, 1, "");
  AppendRecord(
      s, 0, Msg(Write1(3, "INSERT INTO u(k) VALUES ('x') ON CONFLICT(k) DO UPDATE SET n = n + 1")));
  vsc::proto::WriteRequest batch;
  batch.set_request_id(4);
  *batch.add_statements() = Sql("CREATE INDEX ui ON u(n)");
  *batch.add_statements() =
      Sql("UPDATE u SET n = ?1 WHERE k = ?2", {Value::Int(5), Value::Text("x")});
  AppendRecord(s, 0, Msg(batch));
  AppendRecord(s, 0, Msg(Write1(5, "SELECT * FROM t")));
  AppendRecord(s, 0, Msg(Write1(6, "INSERT INTO t VALUES (last_insert_rowid(), 'no')")));
  AppendRecord(s, 0, Msg(Write1(7, "INSERT INTO nope VALUES (1)")));
  AppendRecord(s, 0, Msg(Write1(8, "BEGIN")));
  AppendRecord(s, 0,
               Msg(Write1(9, "INSERT INTO t(v) VALUES (?1); DELETE FROM t", {Value::Int(1)})));
  AppendRecord(s, 1, "");
  Write("write_request_fuzz", "mixed", s);
}

vsc::proto::LogEntry Entry(uint64_t seq, std::vector<std::string> sqls, uint32_t kind = 0) {
  vsc::replication::Entry e;
  e.epoch = 1;
  e.seq = seq;
  e.ts_micros = 1'700'000'000'000'000 + static_cast<int64_t>(seq);
  e.kind = static_cast<vsc::replication::Entry::Kind>(kind);
  for (auto& sql : sqls) e.statements.push_back({sql, {}});
  vsc::proto::LogEntry le;
  vsc::director::ToProto(e, &le);
  return le;
}

void ReplicateSeeds() {
  vsc::proto::Replicate one;
  *one.add_entries() =
      Entry(1, {"CREATE TABLE t(id INTEGER PRIMARY KEY, v, at DEFAULT CURRENT_TIMESTAMP)"});
  *one.add_entries() =
      Entry(2, {"INSERT INTO t(v) VALUES (random())", "INSERT INTO t(v) VALUES (randomblob(4))"});
  one.set_head_seq(3);
  vsc::proto::Replicate two;
  *two.add_entries() = Entry(3, {"UPDATE t SET v = datetime('now') WHERE id = 1"});
  *two.add_entries() = Entry(4, {}, 1);  // checksum marker
  *two.add_entries() = Entry(5, {"INSERT INTO missing VALUES (1)"});
  vsc::proto::Replicate gap;
  *gap.add_entries() = Entry(9, {"DELETE FROM t"});
  std::string s;
  AppendRecord(s, 0, Msg(one));
  AppendRecord(s, 0, Msg(two));
  AppendRecord(s, 1, Msg(one));  // a duplicate on another session
  AppendRecord(s, 0, Msg(gap));
  Write("replicate_fuzz", "stream", s);
}

void ReadSeeds() {
  auto req = [](uint64_t id, const std::string& sql, std::vector<Value> p = {}, uint64_t min = 0) {
    vsc::proto::ReadRequest r;
    r.set_request_id(id);
    *r.mutable_statement() = Sql(sql, std::move(p));
    r.set_min_seq(min);
    return Msg(r);
  };
  Write("sql_read_fuzz", "by_id", req(1, "SELECT * FROM t WHERE id = ?1", {Value::Int(1000)}));
  Write("sql_read_fuzz", "aggregate", req(2, "SELECT node, count(*), sum(r) FROM t GROUP BY node"));
  Write("sql_read_fuzz", "everything", req(3, "SELECT * FROM t"));
  Write("sql_read_fuzz", "not_applied", req(4, "SELECT 1", {}, 99));
  Write("sql_read_fuzz", "write", req(5, "DELETE FROM t"));
  Write("sql_read_fuzz", "blob", req(6, "SELECT b, hex(b) FROM t WHERE id < ?1", {Value::Int(20)}));
}

// The admin API's service bodies, encoded by TableToJson / ServiceToJson / ServerToJson from a
// table restored from ipvsadm rules plus the checks the rules cannot say.
void ServiceJsonSeeds() {
  using namespace vsc::vservice;
  VirtualServiceTable t;
  if (!RestoreRules(t,
                    "-A -t 10.0.0.1:80 -s wlc -p 360 -M 255.255.255.0\n"
                    "-a -t 10.0.0.1:80 -r 192.168.1.11:80 -m -w 3 -x 100 -y 50\n"
                    "-A -u [2001:db8::1]:53 -s rr -o\n"
                    "-a -u [2001:db8::1]:53 -r [2001:db8::a]:53 -g -w 1\n")
           .ok()) {
    std::abort();
  }
  const ServiceKey web = t.services().begin()->first;
  const AddrPort rs = t.Find(web)->dests.begin()->first;
  DestConfig d = t.Find(web)->dests.begin()->second;
  d.check = DefaultCheck(CheckType::kHttpGet);
  d.check->path = "/healthz";
  d.agent_id = "rs1";
  if (!t.EditDest(web, rs, d).ok()) std::abort();
  Write("service_json_fuzz", "table", TableToJson(t).dump());
  Write("service_json_fuzz", "service", ServiceToJson(*t.Find(web)).dump());
  Write("service_json_fuzz", "server", ServerToJson(rs, d).dump());
}

// The HTTP API's bodies: mode byte 0 = JSON, 1 = text/plain, 2 = SQL for ParameterSlots.
void SqlHttpSeeds() {
  const std::string t = "sql_http_body_fuzz";
  Write(t, "forms",
        std::string(1, '\0') +
            R"j(["CREATE TABLE foo (id integer primary key, name text)",)j"
            R"j(["INSERT INTO foo(name, age) VALUES(?, ?)", "fiona", 20],)j"
            R"j(["INSERT INTO foo(name) VALUES(:name)", {"name": "x"}], ["SELECT 1"]])j");
  Write(t, "types",
        std::string(1, '\0') +
            R"j([["X", 1, 1.5, true, null, "x'0aff'", [1, 2, 255], 18446744073709551615]])j");
  Write(t, "bad_named", std::string(1, '\0') + R"j([["SELECT :a, ?", {"a": 1, "b": 2}]])j");
  Write(t, "text_plain", std::string(1, '\1') + "SELECT * FROM foo WHERE id = 1");
  Write(t, "slots",
        std::string(1, '\2') + "SELECT ?3, :a, @b, $c, '?', \"?\", [?] -- ?\n/* ? */ ?");
}

}  // namespace

// Batches as StateSync sends them: templates of an IPv4 service, a UDP session of an IPv6 one.
void SyncSeeds() {
  using vsc::director::SyncKind;
  using vsc::director::SyncRecord;
  using vsc::vservice::IpAddress;
  SyncRecord t;
  t.kind = SyncKind::kTemplate;
  t.service = {vsc::vservice::Proto::kTcp, IpAddress::V4(0x0a000001), 80};
  t.client = {IpAddress::V4(0xc0a80700), 0};
  t.dest = {IpAddress::V4(0x0a000102), 8080};
  t.expires_in = std::chrono::milliseconds(300000);
  SyncRecord s;
  s.kind = SyncKind::kUdpSession;
  s.service = {vsc::vservice::Proto::kUdp, *IpAddress::Parse("2001:db8::1"), 53};
  s.client = {*IpAddress::Parse("2001:db8::77"), 40000};
  s.dest = {*IpAddress::Parse("2001:db8::100"), 53};
  s.expires_in = std::chrono::milliseconds(1500);
  const std::vector<SyncRecord> both = {t, s};
  Write("sync_batch_fuzz", "template_and_session",
        Msg(vsc::director::PackSync(both).at(0).sync_batch()));
  std::vector<SyncRecord> many(40, t);
  for (size_t i = 0; i < many.size(); ++i) {
    many[i].client.addr = IpAddress::V4(0xc0a80700 + static_cast<uint32_t>(i));
  }
  Write("sync_batch_fuzz", "full_datagram", Msg(vsc::director::PackSync(many).at(0).sync_batch()));
}

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: fuzz_seeds DIR (writes DIR/<target>/<seed>)\n");
    return 2;
  }
  g_dir = argv[1];
  KeySeeds();
  ConfigSeeds();
  SplitterSeeds();
  StatementSeeds();
  SnapshotSeeds();
  SqlHttpSeeds();
  HeartbeatSeeds();
  SessionSeeds();
  WriteSeeds();
  ReplicateSeeds();
  ReadSeeds();
  ServiceJsonSeeds();
  SyncSeeds();
  std::printf("fuzz seeds written under %s\n", g_dir.c_str());
  return 0;
}

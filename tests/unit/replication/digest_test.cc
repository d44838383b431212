#include "replication/digest.h"

#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <map>
#include <sstream>

#include "replication/entry_codec.h"
#include "unit/replication/random_entries.h"

namespace vsc::replication {
namespace {

using testing_util::RandomEntry;
using testing_util::RandomValue;

EntryResult RandomResult(Random& rng, const Entry& e) {
  EntryResult r;
  r.seq = e.seq;
  r.code = rng.Uniform(4) == 0 ? 19 : 0;
  r.rows_changed = r.code == 0 ? static_cast<int64_t>(rng.Uniform(5)) : 0;
  if (e.kind == Entry::Kind::kChecksum) r.checksum = std::string(64, 'a' + rng.Uniform(6));
  return r;
}

TEST(DigestTest, EqualInputsGiveEqualDigests) {
  Random a(11), b(11);
  Digest da = ZeroDigest(), db = ZeroDigest();
  for (uint64_t seq = 1; seq <= 500; ++seq) {
    Entry ea = RandomEntry(a, seq), eb = RandomEntry(b, seq);
    da = NextDigest(da, ea, RandomResult(a, ea));
    db = NextDigest(db, eb, RandomResult(b, eb));
    ASSERT_EQ(da, db);
  }
  EXPECT_NE(da, ZeroDigest());
}

// Every field the digest covers, changed alone, changes the digest; the error text is the only
// field it ignores.
TEST(DigestTest, AnyFieldChangeChangesTheDigest) {
  Random rng(12);
  using Mutation = std::function<void(Digest&, Entry&, EntryResult&)>;
  const std::vector<std::pair<std::string, Mutation>> mutations = {
      {"previous", [](Digest& d, Entry&, EntryResult&) { d[31] ^= 1; }},
      {"seq", [](Digest&, Entry& e, EntryResult&) { e.seq += 1; }},
      {"epoch", [](Digest&, Entry& e, EntryResult&) { e.epoch += 1; }},
      {"ts", [](Digest&, Entry& e, EntryResult&) { e.ts_micros -= 1; }},
      {"kind",
       [](Digest&, Entry& e, EntryResult&) {
         e.kind = e.kind == Entry::Kind::kWrite ? Entry::Kind::kChecksum : Entry::Kind::kWrite;
       }},
      {"statement added",
       [](Digest&, Entry& e, EntryResult&) {
         e.statements.push_back({"DELETE FROM t", {}});
       }},
      {"sql",
       [](Digest&, Entry& e, EntryResult&) {
         if (e.statements.empty()) e.statements.push_back({"", {}});
         e.statements[0].sql += " ";
       }},
      {"param added",
       [](Digest&, Entry& e, EntryResult&) {
         if (e.statements.empty()) e.statements.push_back({"x", {}});
         e.statements[0].params.push_back(Value::Null());
       }},
      {"param kind", [](Digest&, Entry& e,
                        EntryResult&) { e.statements[0].params[0].kind = Value::Kind::kText; }},
      {"code", [](Digest&, Entry&, EntryResult& r) { r.code += 1; }},
      {"rows", [](Digest&, Entry&, EntryResult& r) { r.rows_changed += 1; }},
      {"checksum", [](Digest&, Entry&, EntryResult& r) { r.checksum += "0"; }},
  };
  for (int round = 0; round < 300; ++round) {
    Digest prev;
    for (auto& b : prev) b = static_cast<uint8_t>(rng.Uniform(256));
    Entry e = RandomEntry(rng, 1 + rng.Uniform(1000));
    // A fixed blob parameter so that "param kind" (text with the same bytes) is a real change.
    e.statements.insert(e.statements.begin(), Statement{"x", {Value::Blob("ab")}});
    EntryResult r = RandomResult(rng, e);
    const Digest base = NextDigest(prev, e, r);
    for (const auto& [name, mutate] : mutations) {
      Digest p2 = prev;
      Entry e2 = e;
      EntryResult r2 = r;
      mutate(p2, e2, r2);
      EXPECT_NE(NextDigest(p2, e2, r2), base) << name << " round " << round;
    }
    EntryResult r3 = r;
    r3.error = "some other wording";
    EXPECT_EQ(NextDigest(prev, e, r3), base);
  }
}

TEST(DigestTest, LayoutHasNoAmbiguousSplits) {
  Entry one, two;
  one.statements = {{"ab", {}}};
  two.statements = {{"a", {}}, {"b", {}}};
  EXPECT_NE(NextDigest(ZeroDigest(), one, {}), NextDigest(ZeroDigest(), two, {}));
  Entry i, r;
  i.statements = {{"x", {Value::Int(1)}}};
  r.statements = {{"x", {Value::Real(1.0)}}};
  EXPECT_NE(NextDigest(ZeroDigest(), i, {}), NextDigest(ZeroDigest(), r, {}));
}

TEST(DigestTest, HexAndBytes) {
  Digest d = ZeroDigest();
  d[0] = 0xab;
  d[31] = 0x01;
  EXPECT_EQ(DigestHex(d), "ab" + std::string(60, '0') + "01");
  std::string raw(d.begin(), d.end());
  ASSERT_TRUE(DigestFromBytes(raw).ok());
  EXPECT_EQ(*DigestFromBytes(raw), d);
  EXPECT_EQ(DigestFromBytes("short").status().message(), "digest must be 32 bytes, got 5");
}

TEST(EntryCodecTest, RoundTripsAndRefusesEveryTruncation) {
  Random rng(13);
  for (int round = 0; round < 300; ++round) {
    Entry e = RandomEntry(rng, 1);
    for (int k = 0; k < 3; ++k) e.statements.push_back({"s", {RandomValue(rng), RandomValue(rng)}});
    const std::string bytes = EncodeStatements(e.statements);
    auto back = DecodeStatements(bytes);
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    EXPECT_EQ(*back, e.statements);
    for (size_t cut = 0; cut < bytes.size(); ++cut) {
      EXPECT_EQ(DecodeStatements(bytes.substr(0, cut)).status().code(), Code::kDataLoss);
    }
    EXPECT_EQ(DecodeStatements(bytes + "x").status().code(), Code::kDataLoss);
  }
  std::string bad_kind;
  PutU32(bad_kind, 1);
  PutBytes(bad_kind, "x");
  PutU32(bad_kind, 1);
  PutU8(bad_kind, 9);
  EXPECT_EQ(DecodeStatements(bad_kind).status().message(),
            "log payload: unknown parameter kind; the log file is damaged");
}

// ---- the test vector printed in docs/protocol.md, section "Digest chain" ----

std::map<std::string, std::string> DocHexBlocks() {
  std::ifstream in(std::string(VSC_SOURCE_DIR) + "/docs/protocol.md");
  std::map<std::string, std::string> blocks;
  std::string line, name, hex;
  bool inside = false;
  while (std::getline(in, line)) {
    if (!inside && line.rfind("```hex ", 0) == 0) {
      inside = true;
      name = line.substr(7);
      hex.clear();
    } else if (inside && line.rfind("```", 0) == 0) {
      inside = false;
      blocks[name] = hex;
    } else if (inside) {
      for (char c : line) {
        if (std::isxdigit(static_cast<unsigned char>(c))) hex.push_back(c);
      }
    }
  }
  return blocks;
}

std::string Hex(const std::string& bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char b : bytes) {
    out.push_back(kHex[b >> 4]);
    out.push_back(kHex[b & 15]);
  }
  return out;
}

TEST(DigestTest, DocumentedVectorMatches) {
  const auto blocks = DocHexBlocks();
  ASSERT_EQ(blocks.count("digest-input"), 1u);
  ASSERT_EQ(blocks.count("digest-output"), 1u);
  Entry e;
  e.epoch = 2;
  e.seq = 7;
  e.ts_micros = 1'700'000'000'000'000;
  e.kind = Entry::Kind::kWrite;
  e.statements = {{"INSERT INTO t(a, b) VALUES(?1, ?2)", {Value::Int(-1), Value::Text("hi")}}};
  EntryResult r;
  r.seq = 7;
  r.code = 0;
  r.rows_changed = 1;
  Digest prev = ZeroDigest();
  prev[0] = 0x11;
  EXPECT_EQ(Hex(DigestInput(prev, e, r)), blocks.at("digest-input"));
  EXPECT_EQ(DigestHex(NextDigest(prev, e, r)), blocks.at("digest-output"));
}

}  // namespace
}  // namespace vsc::replication

// etcd's v3 JSON gateway: the bodies the sequencer lease sends and the parsing of answers as
// etcd 3.4.23 gave them (recorded with curl against `etcd` on loopback).
#include "director/etcd_codec.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "common/base64.h"

namespace vsc::director::etcd {
namespace {

using nlohmann::json;

constexpr const char* kHeader =
    R"("header":{"cluster_id":"15118495548433857066","member_id":"13668033151171901709",)"
    R"("revision":"2","raft_term":"2"})";

TEST(EtcdCodecTest, RequestBodiesAreTheGatewaysJson) {
  EXPECT_EQ(json::parse(GrantBody(3)), json::parse(R"({"TTL":"3"})"));
  EXPECT_EQ(json::parse(LeaseIdBody(4111120378023639047)),
            json::parse(R"({"ID":"4111120378023639047"})"));
  EXPECT_EQ(json::parse(RangeBody("/vscluster/c/sequencer")),
            json::parse(R"({"key":"L3ZzY2x1c3Rlci9jL3NlcXVlbmNlcg=="})"));
  const json txn = json::parse(CreateWithLeaseBody("/vscluster/c/sequencer", "a", 77));
  const std::string k = Base64Encode("/vscluster/c/sequencer");
  ASSERT_EQ(txn["compare"].size(), 1u);
  EXPECT_EQ(txn["compare"][0]["target"], "CREATE");
  EXPECT_EQ(txn["compare"][0]["result"], "EQUAL");
  EXPECT_EQ(txn["compare"][0]["key"], k);
  EXPECT_EQ(txn["compare"][0]["create_revision"], "0");
  ASSERT_EQ(txn["success"].size(), 2u);
  EXPECT_EQ(txn["success"][0]["request_put"]["key"], k);
  EXPECT_EQ(txn["success"][0]["request_put"]["value"], Base64Encode("a"));
  EXPECT_EQ(txn["success"][0]["request_put"]["lease"], "77");
  EXPECT_EQ(txn["success"][1]["request_range"]["key"], k);
  ASSERT_EQ(txn["failure"].size(), 1u);
  EXPECT_EQ(txn["failure"][0]["request_range"]["key"], k);
}

// The service table's put-if-unchanged: a compare on mod_revision and a put under no lease.
TEST(EtcdCodecTest, PutIfModRevisionComparesTheModRevisionAndPutsWithoutALease) {
  const json txn = json::parse(PutIfModRevisionBody("/vscluster/c/services", "t", 41));
  const std::string k = Base64Encode("/vscluster/c/services");
  ASSERT_EQ(txn["compare"].size(), 1u);
  EXPECT_EQ(txn["compare"][0]["target"], "MOD");
  EXPECT_EQ(txn["compare"][0]["result"], "EQUAL");
  EXPECT_EQ(txn["compare"][0]["key"], k);
  EXPECT_EQ(txn["compare"][0]["mod_revision"], "41");
  ASSERT_EQ(txn["success"].size(), 2u);
  EXPECT_EQ(txn["success"][0]["request_put"]["value"], Base64Encode("t"));
  EXPECT_FALSE(txn["success"][0]["request_put"].contains("lease"));
  EXPECT_EQ(txn["success"][1]["request_range"]["key"], k);
  EXPECT_EQ(txn["failure"][0]["request_range"]["key"], k);
  // 0 = create only if absent.
  EXPECT_EQ(json::parse(PutIfModRevisionBody("k", "v", 0))["compare"][0]["mod_revision"], "0");
}

// The in-sync record's put: compared on the sequencer key's create_revision, the put on another.
TEST(EtcdCodecTest, PutIfCreatedAtComparesTheGuardKeyAndPutsTheOther) {
  const json txn =
      json::parse(PutIfCreatedAtBody("/vscluster/c/sequencer", 77, "/vscluster/c/in_sync", "v"));
  const std::string rec = Base64Encode("/vscluster/c/in_sync");
  ASSERT_EQ(txn["compare"].size(), 1u);
  EXPECT_EQ(txn["compare"][0]["target"], "CREATE");
  EXPECT_EQ(txn["compare"][0]["key"], Base64Encode("/vscluster/c/sequencer"));
  EXPECT_EQ(txn["compare"][0]["create_revision"], "77");
  EXPECT_EQ(txn["success"][0]["request_put"]["key"], rec);
  EXPECT_EQ(txn["success"][0]["request_put"]["value"], Base64Encode("v"));
  EXPECT_FALSE(txn["success"][0]["request_put"].contains("lease")) << "outlives its writer";
  EXPECT_EQ(txn["success"][1]["request_range"]["key"], rec);
  EXPECT_EQ(txn["failure"][0]["request_range"]["key"], rec);
}

TEST(EtcdCodecTest, ParsesGrantKeepAliveAndRevoke) {
  auto g =
      ParseGrant(200, std::string("{") + kHeader + R"(,"ID":"4111120378023639045","TTL":"5"})");
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ(g->id, 4111120378023639045);
  EXPECT_EQ(g->ttl_s, 5);

  auto k = ParseKeepAlive(
      200, std::string(R"({"result":{)") + kHeader + R"(,"ID":"4111120378023639047","TTL":"5"}})");
  ASSERT_TRUE(k.ok()) << k.status().ToString();
  EXPECT_EQ(*k, 5);
  // A lease etcd no longer knows: the stream answers it without a TTL.
  auto gone = ParseKeepAlive(200, std::string(R"({"result":{)") + kHeader + R"(,"ID":"123"}})");
  ASSERT_FALSE(gone.ok());
  EXPECT_EQ(gone.status().code(), Code::kNotFound);

  EXPECT_TRUE(ParseRevoke(200, std::string("{") + kHeader + "}").ok());
  Status missing =
      ParseRevoke(404, R"({"error":"etcdserver: requested lease not found","message":"etcdserver: )"
                       R"(requested lease not found","code":5})");
  EXPECT_EQ(missing.code(), Code::kNotFound);
  EXPECT_NE(missing.message().find("requested lease not found"), std::string::npos);
}

TEST(EtcdCodecTest, ParsesTheClaimWhetherItSucceededOrNot) {
  const std::string kv =
      R"({"key":"L3ZzY2x1c3Rlci9jL3NlcXVlbmNlcg==","create_revision":"2","mod_revision":"2",)"
      R"("version":"1","value":"YQ==","lease":"4111120378023639047"})";
  auto won = ParseTxn(200, std::string("{") + kHeader +
                               R"(,"succeeded":true,"responses":[{"response_put":{"header":)"
                               R"({"revision":"2"}}},{"response_range":{"header":{"revision":"2"},)"
                               R"("kvs":[)" +
                               kv + R"(],"count":"1"}}]})");
  ASSERT_TRUE(won.ok()) << won.status().ToString();
  EXPECT_TRUE(won->succeeded);
  EXPECT_EQ(won->revision, 2);
  ASSERT_TRUE(won->kv.has_value());
  EXPECT_EQ(won->kv->key, "/vscluster/c/sequencer");
  EXPECT_EQ(won->kv->value, "a");
  EXPECT_EQ(won->kv->create_revision, 2);
  EXPECT_EQ(won->kv->lease, 4111120378023639047);

  // The compare failed: no "succeeded" field, the failure branch's range names the holder.
  auto lost = ParseTxn(200, std::string("{") + kHeader +
                                R"(,"responses":[{"response_range":{"header":{"revision":"2"},)"
                                R"("kvs":[)" +
                                kv + R"(],"count":"1"}}]})");
  ASSERT_TRUE(lost.ok()) << lost.status().ToString();
  EXPECT_FALSE(lost->succeeded);
  ASSERT_TRUE(lost->kv.has_value());
  EXPECT_EQ(lost->kv->value, "a");

  auto range =
      ParseRange(200, std::string("{") + kHeader + R"(,"kvs":[)" + kv + R"(],"count":"1"})");
  ASSERT_TRUE(range.ok());
  ASSERT_TRUE(range->has_value());
  EXPECT_EQ((*range)->create_revision, 2);
  auto empty = ParseRange(200, std::string("{") + kHeader + "}");
  ASSERT_TRUE(empty.ok());
  EXPECT_FALSE(empty->has_value());
}

// The watch stream's messages as etcd 3.4 sent them for a put and a delete of "foo".
TEST(EtcdCodecTest, ParsesTheWatchStreamsMessages) {
  const json create = json::parse(WatchCreateBody("foo", 43));
  EXPECT_EQ(create["create_request"]["key"], Base64Encode("foo"));
  EXPECT_EQ(create["create_request"]["start_revision"], "43");
  auto created =
      ParseWatchMessage(std::string(R"({"result":{)") + kHeader + R"(,"created":true}})");
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  EXPECT_TRUE(created->created);
  EXPECT_TRUE(created->events.empty());
  auto put = ParseWatchMessage(
      std::string(R"({"result":{)") + kHeader +
      R"(,"events":[{"kv":{"key":"Zm9v","create_revision":"2","mod_revision":"2","version":"1","value":"YmFy"}}]}})");
  ASSERT_TRUE(put.ok()) << put.status().ToString();
  ASSERT_EQ(put->events.size(), 1u);
  EXPECT_FALSE(put->events[0].deleted);
  EXPECT_EQ(put->events[0].kv.value, "bar");
  auto del = ParseWatchMessage(
      std::string(R"({"result":{)") + kHeader +
      R"(,"events":[{"type":"DELETE","kv":{"key":"Zm9v","mod_revision":"3"}}]}})");
  ASSERT_TRUE(del.ok()) << del.status().ToString();
  ASSERT_EQ(del->events.size(), 1u);
  EXPECT_TRUE(del->events[0].deleted);
  EXPECT_EQ(del->events[0].kv.key, "foo");
  EXPECT_EQ(del->events[0].kv.mod_revision, 3);
  auto compacted = ParseWatchMessage(std::string(R"({"result":{)") + kHeader +
                                     R"(,"canceled":true,"compact_revision":"7"}})");
  ASSERT_TRUE(compacted.ok());
  EXPECT_TRUE(compacted->canceled);
  EXPECT_EQ(compacted->compact_revision, 7);
  auto error =
      ParseWatchMessage(R"({"error":{"grpc_code":14,"http_code":503,"message":"no leader"}})");
  EXPECT_EQ(error.status().code(), Code::kUnavailable);
  EXPECT_FALSE(ParseWatchMessage(R"({"result":{"events":[1]}})").ok());
  EXPECT_FALSE(ParseWatchMessage("not json").ok());
}

TEST(EtcdCodecTest, ErrorsSayWhatEtcdSaidAndWhetherToTryAnotherMember) {
  // No leader / no quorum: Unavailable, so the client tries the next endpoint.
  auto noleader = ParseGrant(503, R"({"error":"etcdserver: no leader","message":)"
                                  R"("etcdserver: no leader","code":14})");
  ASSERT_FALSE(noleader.ok());
  EXPECT_EQ(noleader.status().code(), Code::kUnavailable);
  EXPECT_NE(noleader.status().message().find("etcdserver: no leader"), std::string::npos);
  auto timedout = ParseTxn(
      200,
      R"({"error":{"grpc_code":4,"http_code":504,"message":"etcdserver: request timed out"}})");
  ASSERT_FALSE(timedout.ok());
  EXPECT_EQ(timedout.status().code(), Code::kUnavailable);
  auto proxy = ParseRange(502, "<html>bad gateway</html>");
  ASSERT_FALSE(proxy.ok());
  EXPECT_EQ(proxy.status().code(), Code::kUnavailable);
  // A request etcd refused as malformed: not worth another member.
  auto bad = ParseRange(400, R"({"error":"json: cannot unmarshal number into Go value of type )"
                             R"([]uint8","code":3})");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), Code::kFailedPrecondition);
  // Answers that are not what the gateway sends.
  for (const char* body : {"", "[]", "{\"ID\":{}}", "{\"ID\":\"12x\",\"TTL\":\"3\"}",
                           "{\"ID\":\"0\",\"TTL\":\"3\"}"}) {
    auto g = ParseGrant(200, body);
    ASSERT_FALSE(g.ok()) << body;
    EXPECT_EQ(g.status().code(), Code::kDataLoss) << body;
  }
  auto badkv = ParseRange(200, R"({"kvs":[{"key":"!!","value":"YQ=="}]})");
  ASSERT_FALSE(badkv.ok());
  EXPECT_NE(badkv.status().message().find("base64"), std::string::npos);
  EXPECT_FALSE(ParseTxn(200, "{}").ok()) << "a txn answer without responses";
}

}  // namespace
}  // namespace vsc::director::etcd

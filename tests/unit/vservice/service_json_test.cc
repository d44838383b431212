// The JSON form of the service table: the TOML vocabulary, a lossless round trip over random
// tables, and refusals naming the key.
#include "vservice/service_json.h"

#include <gtest/gtest.h>

#include "vservice/service_toml.h"
#include "vservice_test_util.h"

namespace vsc::vservice {
namespace {

using nlohmann::json;

TEST(ServiceJsonTest, EncodeThenDecodeGivesAnEqualTable) {
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    Random rng(seed);
    const VirtualServiceTable table = testing::RandomTable(rng);
    const json j = TableToJson(table);
    // Through text, as the admin API carries it.
    auto decoded = TableFromJson(json::parse(j.dump()));
    ASSERT_TRUE(decoded.ok()) << decoded.status().ToString() << "\n" << j.dump(2);
    EXPECT_TRUE(*decoded == table) << j.dump(2);
    EXPECT_EQ(TableToJson(*decoded), j);
    for (const auto& [key, service] : table.services()) {
      auto one = ServiceFromJson(ServiceToJson(service));
      ASSERT_TRUE(one.ok()) << one.status().ToString();
      EXPECT_TRUE(*one == service);
      for (const auto& [addr, dest] : service.dests) {
        auto server = ServerFromJson(ServerToJson(addr, dest));
        ASSERT_TRUE(server.ok()) << server.status().ToString();
        EXPECT_EQ(server->first, addr);
        EXPECT_TRUE(server->second == dest);
      }
    }
  }
}

TEST(ServiceJsonTest, SpeaksTheTomlVocabulary) {
  auto s = ServiceFromJson(json::parse(R"({"protocol": "UDP", "address": "[2001:db8::1]:53",
      "lb_algo": "sh", "persistence_granularity": "64", "ops": true,
      "server": [{"address": "[2001:db8::a]:53", "lb_kind": "DR", "weight": 2,
                  "check": {"type": "UDP_CHECK", "payload": "00", "delay_loop": 2.5}}]})"));
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->key.proto, Proto::kUdp);
  EXPECT_EQ(s->config.scheduler, "sh");
  ASSERT_TRUE(s->config.persistence.has_value());
  EXPECT_EQ(s->config.persistence->prefix_len, 64);
  EXPECT_EQ(s->config.persistence->timeout_s, kDefaultPersistenceTimeout);  // keepalived's rule
  EXPECT_TRUE(s->config.one_packet);
  const DestConfig& d = s->dests.begin()->second;
  EXPECT_EQ(d.method, Method::kDr);
  ASSERT_TRUE(d.check.has_value());
  EXPECT_EQ(d.check->delay_loop, std::chrono::milliseconds(2500));
  const json back = ServiceToJson(*s);
  EXPECT_EQ(back["server"][0]["lb_kind"], "DR");
  EXPECT_EQ(back["lb_algo"], "sh");
}

void ExpectRefused(const std::string& text, const std::string& part) {
  SCOPED_TRACE(text);
  auto s = ServiceFromJson(json::parse(text));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), Code::kInvalidArgument);
  EXPECT_NE(s.status().message().find(part), std::string::npos) << s.status().message();
}

TEST(ServiceJsonTest, RefusesWhatTomlCannotSayAndNamesTheKey) {
  const std::string head = R"({"protocol": "tcp", "address": "10.0.0.1:80", )";
  ExpectRefused(head + R"("lb_algo": null})", "service: lb_algo must be");
  ExpectRefused(head + R"("server": [{"address": "1.1.1.1:80", "weight": 18446744073709551615}]})",
                "weight must be");
  ExpectRefused(head + R"("server": [1, 2]})", "only objects");
  ExpectRefused(head + R"("server": [{"address": "1.1.1.1:80", "weight": -1}]})",
                "weight must be an integer from 0 to 65535");
  ExpectRefused(head + R"("lb_algo": "fastest"})", "Scheduler or persistence engine not found");
  ExpectRefused(R"({"address": "10.0.0.1:80"})", "protocol is required");
  ExpectRefused(R"([1])", "must be a JSON object");
  std::string deep = head + R"("x": )";
  for (int i = 0; i < 40; ++i) deep += R"({"a": )";
  deep += "1" + std::string(40, '}') + "}";
  ExpectRefused(deep, "nested too deep");
  EXPECT_FALSE(ServerFromJson(json::parse(R"({"weight": 1})")).ok());  // address required
}

}  // namespace
}  // namespace vsc::vservice

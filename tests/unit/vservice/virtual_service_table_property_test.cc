// Random operation sequences against a plain std::map model: every result (success, error code,
// the Change returned) is what the model predicts, the table always equals the model, and a
// failed call leaves the table exactly as it was.
#include <gtest/gtest.h>

#include <map>
#include <optional>

#include "vservice/virtual_service_table.h"
#include "vservice_test_util.h"

namespace vsc::vservice {
namespace {

using namespace vservice::testing;

struct ModelService {
  ServiceConfig config;
  std::map<AddrPort, DestConfig> dests;
};
using Model = std::map<ServiceKey, ModelService>;

constexpr TableLimits kLimits{6, 3};

// A service config and whether the table must accept it.
std::pair<ServiceConfig, bool> GenService(Random& rng, const ServiceKey& key) {
  ServiceConfig c = RandomServiceConfig(rng, key);
  switch (rng.Uniform(10)) {
    case 0:
      c.scheduler = "bogus";
      return {c, false};
    case 1:
      c.one_packet = true;
      return {c, key.proto == Proto::kUdp};
    case 2:
      c.sorry_server = AddrPort{RandomAddress(rng, key.vip.family(), 9), 80};
      return {c, true};
    default:
      return {c, true};
  }
}

std::pair<DestConfig, bool> GenDest(Random& rng, const ServiceKey& key) {
  DestConfig d = RandomDestConfig(rng, key);
  switch (rng.Uniform(12)) {
    case 0:
      d.weight = kMaxWeight + 1;
      return {d, false};
    case 1:
      d.l_threshold = d.u_threshold + 1;
      return {d, false};
    case 2:
      d.method = Method::kDr;
      return {d, key.proto == Proto::kUdp};
    case 3:
      d.agent_id = "rs-" + std::to_string(rng.Uniform(9));
      return {d, true};
    default:
      return {d, true};
  }
}

void ExpectTableEqualsModel(const VirtualServiceTable& table, const Model& model) {
  ASSERT_EQ(table.services().size(), model.size());
  for (const auto& [key, m] : model) {
    const VirtualService* s = table.Find(key);
    ASSERT_NE(s, nullptr) << ToString(key);
    EXPECT_EQ(s->key, key);
    EXPECT_EQ(s->config, m.config);
    EXPECT_EQ(s->dests, m.dests);
  }
}

class Runner {
 public:
  explicit Runner(uint64_t seed) : rng_(seed), table_(kLimits) {}

  void Step() {
    const ServiceKey key = RandomKey(rng_);
    const VirtualServiceTable before = table_;
    Result<Change> got = Change{};
    std::optional<Code> want_error;
    Change want;
    switch (rng_.Uniform(rng_.Uniform(50) == 0 ? 7 : 6)) {
      case 0:
        got = AddService(key, want_error, want);
        break;
      case 1:
        got = EditService(key, want_error, want);
        break;
      case 2:
        got = DelService(key, want_error, want);
        break;
      case 3:
        got = AddDest(key, want_error, want);
        break;
      case 4:
        got = EditDest(key, want_error, want);
        break;
      case 5:
        got = DelDest(key, want_error, want);
        break;
      default:
        got = Clear(want);
        break;
    }
    if (want_error) {
      ASSERT_FALSE(got.ok());
      EXPECT_EQ(got.status().code(), *want_error) << got.status().ToString();
      EXPECT_EQ(table_, before) << "a failed call changed the table";
    } else {
      ASSERT_TRUE(got.ok()) << got.status().ToString();
      EXPECT_EQ(*got, want);
    }
    ExpectTableEqualsModel(table_, model_);
  }

 private:
  Result<Change> AddService(const ServiceKey& key, std::optional<Code>& err, Change& want) {
    auto [config, valid] = GenService(rng_, key);
    if (model_.contains(key))
      err = Code::kAlreadyExists;
    else if (!valid)
      err = Code::kInvalidArgument;
    else if (model_.size() >= kLimits.max_services)
      err = Code::kResourceExhausted;
    else
      model_[key] = ModelService{config, {}};
    want = Change{ChangeKind::kAddService, {key}, std::nullopt, 0, true};
    return table_.AddService(key, config);
  }

  Result<Change> EditService(const ServiceKey& key, std::optional<Code>& err, Change& want) {
    auto [config, valid] = GenService(rng_, key);
    auto it = model_.find(key);
    if (it == model_.end())
      err = Code::kNotFound;
    else if (!valid)
      err = Code::kInvalidArgument;
    else {
      want =
          Change{ChangeKind::kEditService, {key}, std::nullopt, 0, !(it->second.config == config)};
      it->second.config = config;
    }
    return table_.EditService(key, config);
  }

  Result<Change> DelService(const ServiceKey& key, std::optional<Code>& err, Change& want) {
    auto it = model_.find(key);
    if (it == model_.end())
      err = Code::kNotFound;
    else {
      want = Change{ChangeKind::kDelService, {key}, std::nullopt, it->second.dests.size(), true};
      model_.erase(it);
    }
    return table_.DelService(key);
  }

  // A destination of the service's family, or (1 in 10) of the other family.
  AddrPort DestAddr(const ServiceKey& key, bool& valid) {
    const bool other = rng_.Uniform(10) == 0;
    valid = !other;
    const Family f = key.vip.is_v4() != other ? Family::kV4 : Family::kV6;
    return RandomDestAddr(rng_, f);
  }

  Result<Change> AddDest(const ServiceKey& key, std::optional<Code>& err, Change& want) {
    bool addr_ok = true;
    const AddrPort addr = DestAddr(key, addr_ok);
    auto [config, valid] = GenDest(rng_, key);
    auto it = model_.find(key);
    if (it == model_.end())
      err = Code::kNotFound;
    else if (it->second.dests.contains(addr))
      err = Code::kAlreadyExists;
    else if (!valid || !addr_ok)
      err = Code::kInvalidArgument;
    else if (it->second.dests.size() >= kLimits.max_dests_per_service)
      err = Code::kResourceExhausted;
    else
      it->second.dests[addr] = config;
    want = Change{ChangeKind::kAddDest, {key}, addr, 0, true};
    return table_.AddDest(key, addr, config);
  }

  // An existing destination most of the time, so edits and deletes mostly succeed.
  AddrPort PickDest(const ServiceKey& key) {
    auto it = model_.find(key);
    if (it != model_.end() && !it->second.dests.empty() && rng_.Uniform(4) != 0) {
      auto d = it->second.dests.begin();
      std::advance(d, rng_.Uniform(it->second.dests.size()));
      return d->first;
    }
    return RandomDestAddr(rng_, key.vip.family());
  }

  Result<Change> EditDest(const ServiceKey& key, std::optional<Code>& err, Change& want) {
    const AddrPort addr = PickDest(key);
    auto [config, valid] = GenDest(rng_, key);
    auto it = model_.find(key);
    if (it == model_.end() || !it->second.dests.contains(addr))
      err = Code::kNotFound;
    else if (!valid)
      err = Code::kInvalidArgument;
    else {
      DestConfig& d = it->second.dests[addr];
      want = Change{ChangeKind::kEditDest, {key}, addr, 0, !(d == config)};
      d = config;
    }
    return table_.EditDest(key, addr, config);
  }

  Result<Change> DelDest(const ServiceKey& key, std::optional<Code>& err, Change& want) {
    const AddrPort addr = PickDest(key);
    auto it = model_.find(key);
    if (it == model_.end() || it->second.dests.erase(addr) == 0) err = Code::kNotFound;
    want = Change{ChangeKind::kDelDest, {key}, addr, 0, true};
    return table_.DelDest(key, addr);
  }

  Result<Change> Clear(Change& want) {
    want = Change{ChangeKind::kClear, {}, std::nullopt, 0, !model_.empty()};
    for (const auto& [key, m] : model_) {
      want.services.push_back(key);
      want.dests_removed += m.dests.size();
    }
    model_.clear();
    return table_.Clear();
  }

  Random rng_;
  VirtualServiceTable table_;
  Model model_;
};

TEST(VirtualServiceTableProperty, MatchesAMapModelAndFailedCallsChangeNothing) {
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    SCOPED_TRACE(seed);
    Runner runner(seed);
    for (int i = 0; i < 3000; ++i) {
      runner.Step();
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}

}  // namespace
}  // namespace vsc::vservice

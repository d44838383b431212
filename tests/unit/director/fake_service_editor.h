// FakeServiceEditor: a ServiceEditor that applies tables in memory, for the operator-surface
// tests (admin routes, saved table, reload). Commit records every table it was given; a test
// can make the next commit fail (as a port in use would) and set runtime figures.
#pragma once

#include <optional>
#include <vector>

#include "director/service_editor.h"

namespace vsc::director {

class FakeServiceEditor : public ServiceEditor {
 public:
  const vservice::VirtualServiceTable& table() const override { return table_; }

  Result<std::vector<vservice::Change>> Commit(vservice::VirtualServiceTable next) override {
    ++commits;
    if (fail_next) {
      Status s = *fail_next;
      fail_next.reset();
      return s;
    }
    std::vector<vservice::Change> changes = Diff(table_, next);
    table_ = std::move(next);
    return changes;
  }

  std::vector<ServiceRuntime> Runtime() const override {
    std::vector<ServiceRuntime> out;
    for (const auto& [key, service] : table_.services()) {
      ServiceRuntime r = runtime_for ? *runtime_for : ServiceRuntime{};
      r.key = key;
      r.dests.clear();
      for (const auto& [addr, d] : service.dests) {
        DestRuntime dr = dest_runtime_for ? *dest_runtime_for : DestRuntime{};
        dr.dest = addr;
        dr.effective_weight = d.weight;
        r.dests.push_back(dr);
      }
      out.push_back(std::move(r));
    }
    return out;
  }

  Status ZeroCounters(const std::optional<vservice::ServiceKey>& key) override {
    if (key && table_.Find(*key) == nullptr) {
      return NotFound("No such service: " + vservice::ToString(*key));
    }
    zeroed.push_back(key);
    return Status::Ok();
  }

  net::FlowTimeoutValues Timeouts() const override { return timeouts_.Get(); }
  void SetTimeouts(const net::FlowTimeoutValues& values) override { timeouts_.Set(values); }
  asio::awaitable<FlowList> Flows() override { co_return flows; }

  FlowList flows;  // what Flows() answers
  int commits = 0;
  std::optional<Status> fail_next;
  std::optional<ServiceRuntime> runtime_for;    // figures every service reports
  std::optional<DestRuntime> dest_runtime_for;  // figures every destination reports
  std::vector<std::optional<vservice::ServiceKey>> zeroed;

 private:
  net::FlowTimeouts timeouts_;
  // Removed, added, edited services, as the interface promises (destinations not itemised).
  static vservice::Change Of(vservice::ChangeKind kind, const vservice::ServiceKey& key) {
    vservice::Change c;
    c.kind = kind;
    c.services = {key};
    return c;
  }
  static std::vector<vservice::Change> Diff(const vservice::VirtualServiceTable& a,
                                            const vservice::VirtualServiceTable& b) {
    std::vector<vservice::Change> out;
    for (const auto& [k, s] : a.services()) {
      if (!b.Find(k)) out.push_back(Of(vservice::ChangeKind::kDelService, k));
    }
    for (const auto& [k, s] : b.services()) {
      if (!a.Find(k)) out.push_back(Of(vservice::ChangeKind::kAddService, k));
    }
    for (const auto& [k, s] : b.services()) {
      const vservice::VirtualService* old = a.Find(k);
      if (old && !(*old == s)) out.push_back(Of(vservice::ChangeKind::kEditService, k));
    }
    return out;
  }

  vservice::VirtualServiceTable table_;
};

}  // namespace vsc::director

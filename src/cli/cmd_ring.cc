// vsc ring: the director's ring (DESIGN.md §8) — members, ids, arc shares and finger tables —
// and `vsc ring owner KEY`. vsc clip publish | subscribe | fetch: the clip relay's client.
#include <cstdio>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "cli/options.h"
#include "client/ring_client.h"
#include "client/ring_subscription.h"
#include "relay/answers.h"
#include "ring/fingers.h"
#include "ring/id.h"

namespace vsc::cli {
namespace {

struct RingFlags {
  std::string director = "127.0.0.1";
  uint16_t ring_port = 7400;
  std::string mode = "prefetch";
  double timeout_ms = 2000;
  JsonOutput json;
  std::string key;
  std::string group;
  std::string file;
  std::string data;
  uint64_t since = 0;
  uint64_t count = 0;      // subscribe: stop after this many clips (0: never)
  double duration_ms = 0;  // subscribe: stop after this long (0: never)
  std::string out_dir;     // subscribe: save each clip as DIR/<seq>.clip
};

void AddRingOptions(CLI::App* cmd, RingFlags* f) {
  cmd->add_option("--director", f->director, "director host (HOST:RING_PORT also accepted)")
      ->type_name("HOST")
      ->capture_default_str();
  cmd->add_option("--ring-port", f->ring_port, "the director's ring_port")->capture_default_str();
  cmd->add_option("--mode", f->mode, "prefetch, ask or via-director")->capture_default_str();
  AddMillisOption(cmd, "--timeout-ms", &f->timeout_ms, "per-try timeout");
}

Result<client::RingClientOptions> ClientOptions(const RingFlags& f) {
  client::RingClientOptions o;
  o.director_host = f.director;
  o.ring_port = f.ring_port;
  if (const size_t colon = f.director.rfind(':'); colon != std::string::npos) {
    o.director_host = f.director.substr(0, colon);
    o.ring_port = static_cast<uint16_t>(std::stoul(f.director.substr(colon + 1)));
  }
  VSC_ASSIGN_OR_RETURN(o.mode, client::ParseRingMode(f.mode));
  o.timeout = std::chrono::microseconds(static_cast<int64_t>(f.timeout_ms * 1000));
  return o;
}

int Fail(const char* what, const Status& s) {
  std::fprintf(stderr, "vsc %s: %s\n", what, s.ToString().c_str());
  return 1;
}

int RunRing(const RingFlags& f) {
  auto options = ClientOptions(f);
  if (!options.ok()) return Fail("ring", options.status());
  RealClock clock;
  client::RingClient c(*options, clock);
  auto table = c.RefreshTable();
  if (!table.ok()) return Fail("ring", table.status());
  const ring::Ring& r = **table;
  nlohmann::json j = {{"version", r.version()}, {"members", nlohmann::json::array()}};
  std::FILE* out = f.json.human();
  std::fprintf(out, "ring version %llu, %zu member(s)\n",
               static_cast<unsigned long long>(r.version()), r.size());
  for (size_t i = 0; i < r.size(); ++i) {
    const ring::Member& m = r.member(i);
    ring::FingerTable fingers(r, i);
    std::fprintf(out, "%-16s %s  %s:%u  arc %5.2f %%  fingers:", m.name.c_str(),
                 ring::IdHex(m.id).c_str(), m.endpoint.host.c_str(), m.endpoint.port,
                 100 * r.ArcShare(i));
    nlohmann::json fj = nlohmann::json::array();
    for (int k = 0; k < ring::kFingerCount; ++k) {
      // Only where the finger changes: the rest repeat the entry before them.
      if (k > 0 && fingers.finger(k) == fingers.finger(k - 1)) continue;
      std::fprintf(out, " [%d]%s", k, r.member(fingers.finger(k)).name.c_str());
      fj.push_back({{"from", k}, {"node", r.member(fingers.finger(k)).name}});
    }
    std::fprintf(out, "\n");
    j["members"].push_back({{"name", m.name},
                            {"id", ring::IdHex(m.id)},
                            {"endpoint", relay::EndpointText(m)},
                            {"arc_share", r.ArcShare(i)},
                            {"fingers", fj}});
  }
  if (f.json.wanted) {
    if (Status s = WriteJson(f.json, j); !s.ok()) return Fail("ring", s);
  }
  return 0;
}

int RunOwner(const RingFlags& f) {
  auto options = ClientOptions(f);
  if (!options.ok()) return Fail("ring owner", options.status());
  RealClock clock;
  client::RingClient c(*options, clock);
  auto owner = c.AskOwner(f.key);
  if (!owner.ok()) return Fail("ring owner", owner.status());
  std::printf("%s %s %s (key id %s)\n", f.key.c_str(), owner->first.c_str(), owner->second.c_str(),
              ring::IdHex(ring::KeyId(f.key)).c_str());
  return 0;
}

int RunPublish(const RingFlags& f) {
  auto options = ClientOptions(f);
  if (!options.ok()) return Fail("clip publish", options.status());
  std::vector<uint8_t> bytes(f.data.begin(), f.data.end());
  if (!f.file.empty()) {
    std::ifstream in(f.file, std::ios::binary);
    if (!in) return Fail("clip publish", NotFound("cannot read " + f.file));
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  RealClock clock;
  client::RingClient c(*options, clock);
  auto ack = c.Publish(f.group, std::move(bytes));
  if (!ack.ok()) return Fail("clip publish", ack.status());
  std::printf("acked: group %s seq %llu, %u hop(s), via %s\n", f.group.c_str(),
              static_cast<unsigned long long>(ack->seq), ack->hops, ack->node.c_str());
  return 0;
}

int RunFetch(const RingFlags& f) {
  auto options = ClientOptions(f);
  if (!options.ok()) return Fail("clip fetch", options.status());
  RealClock clock;
  client::RingClient c(*options, clock);
  auto got = c.Fetch(f.group, f.since);
  if (!got.ok()) return Fail("clip fetch", got.status());
  for (const client::Clip& clip : got->clips) {
    std::printf("seq %llu: %zu bytes\n", static_cast<unsigned long long>(clip.seq),
                clip.bytes.size());
  }
  std::printf("group %s: %zu clip(s) after seq %llu; last seq %llu\n", f.group.c_str(),
              got->clips.size(), static_cast<unsigned long long>(f.since),
              static_cast<unsigned long long>(got->last_seq));
  if (!got->gone.empty()) std::fprintf(stderr, "note: %s\n", got->gone.c_str());
  return 0;
}

int RunSubscribe(const RingFlags& f) {
  auto options = ClientOptions(f);
  if (!options.ok()) return Fail("clip subscribe", options.status());
  RealClock clock;
  client::RingClient c(*options, clock);
  client::RingSubscription sub(c, f.group, f.since);
  const TimePoint end =
      f.duration_ms > 0
          ? clock.Now() + std::chrono::microseconds(static_cast<int64_t>(f.duration_ms * 1000))
          : TimePoint::max();
  uint64_t got = 0;
  while (clock.Now() < end && (f.count == 0 || got < f.count)) {
    const TimePoint deadline = std::min(end, clock.Now() + std::chrono::seconds(1));
    auto clip = sub.Next(deadline);
    if (!clip.ok()) return Fail("clip subscribe", clip.status());
    if (!clip->has_value()) continue;
    ++got;
    std::printf("seq %llu: %zu bytes\n", static_cast<unsigned long long>((*clip)->seq),
                (*clip)->bytes.size());
    std::fflush(stdout);
    if (!f.out_dir.empty()) {
      std::ofstream o(f.out_dir + "/" + std::to_string((*clip)->seq) + ".clip", std::ios::binary);
      o.write(reinterpret_cast<const char*>((*clip)->bytes.data()),
              static_cast<std::streamsize>((*clip)->bytes.size()));
    }
  }
  std::fprintf(stderr, "%llu clip(s), last seq %llu, %llu duplicate(s) skipped, %llu gap(s)\n",
               static_cast<unsigned long long>(got),
               static_cast<unsigned long long>(sub.last_seq()),
               static_cast<unsigned long long>(sub.stats().duplicates),
               static_cast<unsigned long long>(sub.stats().gaps));
  return 0;
}

}  // namespace

void AddRingCommands(CLI::App& app) {
  auto f = std::make_shared<RingFlags>();
  auto* ring_cmd = app.add_subcommand(
      "ring", "the director's Chord ring: members, ids, arc shares, finger tables");
  AddRingOptions(ring_cmd, f.get());
  AddJsonOption(ring_cmd, &f->json, "the ring");
  auto* owner = ring_cmd->add_subcommand("owner", "the ring node that owns KEY");
  owner->add_option("KEY", f->key, "a key or group name")->required();
  owner->callback([f] { ExitCode() = RunOwner(*f); });
  ring_cmd->callback([f, ring_cmd] {
    if (ring_cmd->get_subcommands().empty()) ExitCode() = RunRing(*f);
  });

  auto* clip = app.add_subcommand("clip", "the clip relay: publish, subscribe, fetch");
  clip->require_subcommand(1);
  AddRingOptions(clip, f.get());
  auto* publish = clip->add_subcommand("publish", "publish one clip (at most 64 KiB) to a group");
  publish->add_option("--group", f->group, "group name")->required();
  publish->add_option("--file", f->file, "the clip's bytes")->type_name("FILE");
  publish->add_option("--data", f->data, "the clip's bytes as text (instead of --file)");
  publish->callback([f] { ExitCode() = RunPublish(*f); });
  auto* subscribe = clip->add_subcommand("subscribe", "print or save each clip as it arrives");
  subscribe->add_option("--group", f->group, "group name")->required();
  subscribe->add_option("--since", f->since, "start after this seq (0: what the owner holds)");
  subscribe->add_option("--count", f->count, "stop after N clips");
  AddMillisOption(subscribe, "--duration-ms", &f->duration_ms, "stop after this long");
  subscribe->add_option("--out", f->out_dir, "save each clip as DIR/SEQ.clip")->type_name("DIR");
  subscribe->callback([f] { ExitCode() = RunSubscribe(*f); });
  auto* fetch = clip->add_subcommand("fetch", "the clips of a group after a seq");
  fetch->add_option("--group", f->group, "group name")->required();
  fetch->add_option("--since", f->since, "after this seq")->capture_default_str();
  fetch->callback([f] { ExitCode() = RunFetch(*f); });
}

}  // namespace vsc::cli

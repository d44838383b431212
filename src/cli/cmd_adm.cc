// vsc adm: the operator's command against a running director's admin API, in the manner of
// ipvsadm: `list` (ipvsadm -L -n, with --stats, --rate, --json), `weight`, `drain`, `remove`,
// `scheduler`, `persistence`; for replicated databases `replication` (per replica applied seq,
// lag, digest, state; queues; log range) and `verify` (a sequenced checksum marker; exit 1
// unless every replica's content hash agrees); `role` and `health` for keepalived
// (cmd_adm_role.cc).
#include <chrono>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/adm_client.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "cli/verify.h"
#include "director/listing.h"

namespace vsc::cli {
namespace {

struct AdmState {
  AdminTarget target;
  bool stats = false, rate = false;
  JsonOutput json;
  std::string id, scheduler, netmask = "255.255.255.255";
  uint32_t weight = 0, timeout_s = 0;
  double verify_timeout_ms = 30000;
  double verify_timeout_s = 0;  // --timeout, the older spelling in seconds; 0 = not given

  double VerifyTimeoutSeconds() const {
    return verify_timeout_s > 0 ? verify_timeout_s : verify_timeout_ms / 1000;
  }
};

// Prints `j` as JSON where --json says; true when it did (the table is then not printed).
bool PrintedAsJson(const AdmState& st, const nlohmann::json& j) {
  if (!st.json.wanted) return false;
  if (Status s = WriteJson(st.json, j); !s.ok()) {
    std::fprintf(stderr, "vsc adm: %s\n", s.message().c_str());
    ExitCode() = 1;
  }
  return st.json.to_stdout();
}

// Sends one request; prints the error and returns nullopt on failure.
std::optional<nlohmann::json> Call(const AdmState& st, const std::string& method,
                                   const std::string& target, const std::string& body) {
  auto r = SendAdmin(st.target, method, target, body);
  if (!r.ok()) {
    std::fprintf(stderr, "vsc adm: %s\n", r.status().ToString().c_str());
    return std::nullopt;
  }
  auto j = nlohmann::json::parse(r->body, nullptr, false);
  if (r->status != 200) {
    std::fprintf(stderr, "vsc adm: %s (HTTP %d)\n", AnswerError(*r).c_str(), r->status);
    return std::nullopt;
  }
  if (j.is_discarded()) {
    std::fprintf(stderr, "vsc adm: the director answered something that is not JSON\n");
    return std::nullopt;
  }
  return j;
}

void Post(const AdmState& st, const std::string& target, const nlohmann::json& body) {
  if (!Call(st, "POST", target, body.dump())) ExitCode() = 1;
}

void PrintReplication(const nlohmann::json& j) {
  std::printf("epoch %llu  log %llu..%llu  committed %llu  policy %s\n",
              static_cast<unsigned long long>(j.value("epoch", 0ull)),
              static_cast<unsigned long long>(j["log"].value("first_seq", 0ull)),
              static_cast<unsigned long long>(j["log"].value("last_seq", 0ull)),
              static_cast<unsigned long long>(j.value("committed_seq", 0ull)),
              j.value("commit_policy", "").c_str());
  std::printf("update queue %llu/%llu  request queue %llu/%llu  write port %u  sql port %u\n",
              static_cast<unsigned long long>(j["update_queue"].value("depth", 0ull)),
              static_cast<unsigned long long>(j["update_queue"].value("capacity", 0ull)),
              static_cast<unsigned long long>(j["request_queue"].value("depth", 0ull)),
              static_cast<unsigned long long>(j["request_queue"].value("capacity", 0ull)),
              j.value("write_port", 0u), j.value("sql_port", 0u));
  if (const auto& s = j.value("sequencer", nlohmann::json::object());
      s.value("lease_required", false)) {
    // Director standby (issue 11): whether this director holds the sequencer's etcd lease.
    if (s.value("sequencing", false)) {
      std::printf("sequencer lease: held, sequencing\n");
    } else {
      std::printf("sequencer lease: not sequencing: %s\n", s.value("reason", "").c_str());
    }
  }
  std::printf("%-12s %-12s %-15s %10s %8s %7s  %-16s %s\n", "ID", "STATE", "REPLICATION", "APPLIED",
              "LAG", "WINDOW", "DIGEST", "REASON");
  for (const auto& r : j["replicas"]) {
    std::string digest = r.value("digest", "");
    if (digest.size() > 16) digest = digest.substr(0, 16);
    std::string repl = r.value("replication", "");
    if (r.value("busy", false)) repl += ",BUSY";
    std::printf("%-12s %-12s %-15s %10llu %8llu %6.0f%%  %-16s %s\n", r.value("id", "").c_str(),
                r.value("state", "").c_str(), repl.c_str(),
                static_cast<unsigned long long>(r.value("applied_seq", 0ull)),
                static_cast<unsigned long long>(r.value("lag", 0ull)),
                100.0 * r["window"].value("fill", 0.0), digest.c_str(),
                r.value("reason", "").c_str());
  }
}

// POST /v1/verify, then polls its result until every replica answered or the timeout passed.
int RunVerify(const AdmState& st) {
  // Call() prints its errors; the Status only stops the wait.
  auto post = [&st](const std::string& target,
                    const nlohmann::json& body) -> Result<nlohmann::json> {
    auto j = Call(st, "POST", target, body.dump());
    if (!j) return Unavailable("admin request failed");
    return *j;
  };
  auto get = [&st](const std::string& target) -> Result<nlohmann::json> {
    auto j = Call(st, "GET", target, "");
    if (!j) return Unavailable("admin request failed");
    return *j;
  };
  auto awaited = AwaitVerification(post, get,
                                   std::chrono::duration_cast<Duration>(
                                       std::chrono::duration<double>(st.VerifyTimeoutSeconds())));
  if (!awaited.ok()) {
    if (awaited.status().code() != Code::kUnavailable) {
      std::fprintf(stderr, "vsc adm: %s\n", awaited.status().ToString().c_str());
    }
    return 1;
  }
  const nlohmann::json& result = *awaited;
  const uint64_t seq = result.value("seq", 0ull);
  std::printf("checksum marker at seq %llu (%.0f ms)\n", static_cast<unsigned long long>(seq),
              result.value("elapsed_ms", 0.0));
  for (const auto& r : result["replicas"]) {
    std::printf("%-12s %-64s %s\n", r.value("id", "").c_str(), r.value("checksum", "").c_str(),
                r.value("status", "").c_str());
  }
  const bool ok = result.value("ok", false);
  if (!result.value("complete", false)) {
    std::printf("result: INCOMPLETE (not every replica answered within %.1f s)\n",
                st.VerifyTimeoutSeconds());
  } else {
    std::printf("result: %s\n", ok ? "OK (every replica holds the same content)" : "MISMATCH");
  }
  return ok ? 0 : 1;
}

}  // namespace

void AddAdmCommand(CLI::App& app) {
  auto* adm = app.add_subcommand("adm", "administer a running director (like ipvsadm)");
  adm->require_subcommand(1);
  auto st = std::make_shared<AdmState>();
  adm->add_option("--director", st->target.director, "director host")
      ->type_name("HOST")
      ->capture_default_str();
  adm->add_option("--admin-port", st->target.admin_port, "the director's admin_port")
      ->type_name("PORT")
      ->capture_default_str();
  adm->add_option("--admin", st->target.admin,
                  "HOST:PORT of the admin API (older spelling of the two above)")
      ->type_name("HOST:PORT");
  adm->add_option("--token-file", st->target.token_file,
                  "file with the admin token (default: $VSC_ADMIN_TOKEN, ./director-admin.token)")
      ->type_name("FILE");

  auto* list =
      adm->add_subcommand("list", "list virtual services and real servers (ipvsadm -L -n)");
  list->add_flag("--stats", st->stats, "counters: connections, packets, bytes");
  list->add_flag("--rate", st->rate, "rates per second");
  AddJsonOption(list, &st->json, "the director's status");
  list->callback([st] {
    auto j = Call(*st, "GET", "/v1/status", "");
    if (!j) {
      ExitCode() = 1;
      return;
    }
    if (PrintedAsJson(*st, *j)) return;
    auto mode = st->stats  ? director::ListingMode::kStats
                : st->rate ? director::ListingMode::kRate
                           : director::ListingMode::kTable;
    std::fputs(director::RenderListing(*j, mode).c_str(), stdout);
  });

  auto* repl = adm->add_subcommand("replication",
                                   "replicated database: per replica applied seq, lag, digest, "
                                   "state; queue depths; log range");
  AddJsonOption(repl, &st->json, "the replication status");
  repl->callback([st] {
    auto j = Call(*st, "GET", "/v1/replication", "");
    if (!j) {
      ExitCode() = 1;
      return;
    }
    if (PrintedAsJson(*st, *j)) return;
    PrintReplication(*j);
  });

  auto* verify = adm->add_subcommand(
      "verify", "checksum every replica at one sequenced point; exit 1 on a mismatch");
  AddMillisOption(verify, "--timeout-ms", &st->verify_timeout_ms,
                  "how long to wait for every replica");
  verify->add_option("--timeout", st->verify_timeout_s, "the same in seconds (older spelling)")
      ->type_name("SECONDS");
  verify->callback([st] { ExitCode() = RunVerify(*st); });

  AddAdmRoleCommands(*adm, std::shared_ptr<const AdminTarget>(st, &st->target));

  auto* weight = adm->add_subcommand("weight", "set a real server's weight (0-65535)");
  weight->add_option("id", st->id, "real server id")->required();
  weight->add_option("weight", st->weight, "new weight")->required()->check(CLI::Range(0, 65535));
  weight->callback([st] {
    Post(*st, "/v1/servers/" + st->id + "/weight", {{"weight", st->weight}});
  });

  auto* drain = adm->add_subcommand("drain", "drain a real server: no new work, flows finish");
  drain->add_option("id", st->id, "real server id")->required();
  drain->callback(
      [st] { Post(*st, "/v1/servers/" + st->id + "/drain", nlohmann::json::object()); });

  auto* remove = adm->add_subcommand("remove", "forget a DRAINING or DOWN real server");
  remove->add_option("id", st->id, "real server id")->required();
  remove->callback(
      [st] { Post(*st, "/v1/servers/" + st->id + "/remove", nlohmann::json::object()); });

  auto* sched =
      adm->add_subcommand("scheduler", "change the scheduler (rr wrr sh lc wlc sed nq ll mh dwlc)");
  sched->add_option("name", st->scheduler, "scheduler name")->required();
  sched->callback([st] { Post(*st, "/v1/scheduler", {{"scheduler", st->scheduler}}); });

  auto* persist =
      adm->add_subcommand("persistence", "set persistence (ipvsadm -p / -M); 0 turns it off");
  persist->add_option("timeout", st->timeout_s, "seconds")->required();
  persist->add_option("--netmask", st->netmask, "client grouping mask")->capture_default_str();
  persist->callback([st] {
    Post(*st, "/v1/persistence", {{"timeout_s", st->timeout_s}, {"netmask", st->netmask}});
  });
}

}  // namespace vsc::cli

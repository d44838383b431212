#include "vservice/ipvsadm_args.h"

#include <array>
#include <vector>

// The option table, the legality matrix and the error texts follow ipvsadm.c (ipvsadm 1.29+,
// louygan/ipvsadm @0c7a7fc): parse_options(), commands_v_options[][], generic_opt_check(),
// set_command(), set_option(), process_options(), parse_service(), string_to_number().

namespace vsc::vservice {
namespace {

// ipvsadm's OPTC_* options that vsc implements, in ipvsadm's order; kOptNames are its optnames.
// clang-format off
enum Opt : uint8_t {
  kNumeric, kConnection, kService, kScheduler, kPersistent, kNetmask, kServer, kForward,
  kWeight, kUThreshold, kLThreshold, kTimeout, kStats, kRate, kExact, kOps, kOptCount
};
constexpr std::array<std::string_view, kOptCount> kOptNames = {
    "numeric", "connection", "service-address", "scheduler", "persistent", "netmask",
    "real-server", "forwarding-method", "weight", "u-threshold", "l-threshold", "timeout",
    "stats", "rate", "exact", "ops"};

// commands_v_options restricted to the columns above, one row per Verb:
// '+' compulsory, 'x' illegal, '1' exclusive (at most one '1' option), ' ' optional.
constexpr std::array<std::string_view, 12> kLegal = {
    // columns: -n -c svc -s -p -M -r fwd -w -x -y --timeout --stats --rate --exact -o
    "xx+   xxxxxxxxx ",   // add-service
    "xx+   xxxxxxxxx ",   // edit-service
    "xx+xxxxxxxxxxxxx",   // delete-service
    "xxxxxxxxxxxxxxxx",   // flush
    " 11xxxxxxxx1   x",   // list
    "xx+xxx+    xxxxx",   // add-server
    "xx+xxx+xxxxxxxxx",   // delete-server
    "xx+xxx+    xxxxx",   // edit-server
    "xxxxxxxxxxxxxxxx",   // set
    "xxxxxxxxxxxxxxxx",   // restore
    " xxxxxxxxxxxxxxx",   // save
    "xx xxxxxxxxxxxxx"};  // zero

constexpr std::array<std::string_view, 12> kVerbNames = {
    "add-service", "edit-service", "delete-service", "flush", "list", "add-server",
    "delete-server", "edit-server", "set", "restore", "save", "zero"};
// clang-format on

enum class Arg : uint8_t { kNone, kRequired, kOptional };
enum class Kind : uint8_t { kVerb, kOpt, kRefused, kIgnored };

struct Spec {
  std::string_view long_name;
  char short_name;  // '\0' = long only
  Arg arg;
  Kind kind;
  uint8_t id;            // a Verb or an Opt
  std::string_view why;  // for kRefused
};

constexpr std::string_view kNoTunnel =
    "-i (ipip tunnelling) is not possible in a user-space director; use -m (nat), or -g (dr) "
    "for vsc-aware UDP servers";
constexpr std::string_view kNoFwmark =
    "-f (firewall-mark services) needs the kernel's packet marks; use -t or -u";
constexpr std::string_view kNoDaemon = "connection sync daemons are not supported by vsc";

constexpr auto V(Verb v) { return static_cast<uint8_t>(v); }

constexpr Spec kSpecs[] = {
    {"add-service", 'A', Arg::kNone, Kind::kVerb, V(Verb::kAddService), ""},
    {"edit-service", 'E', Arg::kNone, Kind::kVerb, V(Verb::kEditService), ""},
    {"delete-service", 'D', Arg::kNone, Kind::kVerb, V(Verb::kDelService), ""},
    {"clear", 'C', Arg::kNone, Kind::kVerb, V(Verb::kClear), ""},
    {"list", 'L', Arg::kNone, Kind::kVerb, V(Verb::kList), ""},
    {"", 'l', Arg::kNone, Kind::kVerb, V(Verb::kList), ""},
    {"zero", 'Z', Arg::kNone, Kind::kVerb, V(Verb::kZero), ""},
    {"add-server", 'a', Arg::kNone, Kind::kVerb, V(Verb::kAddDest), ""},
    {"edit-server", 'e', Arg::kNone, Kind::kVerb, V(Verb::kEditDest), ""},
    {"delete-server", 'd', Arg::kNone, Kind::kVerb, V(Verb::kDelDest), ""},
    {"set", '\0', Arg::kNone, Kind::kVerb, V(Verb::kSetTimeouts), ""},
    {"restore", 'R', Arg::kNone, Kind::kVerb, V(Verb::kRestore), ""},
    {"save", 'S', Arg::kNone, Kind::kVerb, V(Verb::kSave), ""},
    {"tcp-service", 't', Arg::kRequired, Kind::kOpt, kService, ""},
    {"udp-service", 'u', Arg::kRequired, Kind::kOpt, kService, ""},
    {"scheduler", 's', Arg::kRequired, Kind::kOpt, kScheduler, ""},
    {"persistent", 'p', Arg::kOptional, Kind::kOpt, kPersistent, ""},
    {"netmask", 'M', Arg::kRequired, Kind::kOpt, kNetmask, ""},
    {"real-server", 'r', Arg::kRequired, Kind::kOpt, kServer, ""},
    {"masquerading", 'm', Arg::kNone, Kind::kOpt, kForward, ""},
    {"gatewaying", 'g', Arg::kNone, Kind::kOpt, kForward, ""},
    {"weight", 'w', Arg::kRequired, Kind::kOpt, kWeight, ""},
    {"u-threshold", 'x', Arg::kRequired, Kind::kOpt, kUThreshold, ""},
    {"l-threshold", 'y', Arg::kRequired, Kind::kOpt, kLThreshold, ""},
    {"numeric", 'n', Arg::kNone, Kind::kOpt, kNumeric, ""},
    {"connection", 'c', Arg::kNone, Kind::kOpt, kConnection, ""},
    {"timeout", '\0', Arg::kNone, Kind::kOpt, kTimeout, ""},
    {"stats", '\0', Arg::kNone, Kind::kOpt, kStats, ""},
    {"rate", '\0', Arg::kNone, Kind::kOpt, kRate, ""},
    {"exact", 'X', Arg::kNone, Kind::kOpt, kExact, ""},
    {"ops", 'o', Arg::kNone, Kind::kOpt, kOps, ""},
    {"", 'O', Arg::kNone, Kind::kOpt, kOps, ""},
    {"sort", '\0', Arg::kNone, Kind::kIgnored, 0, ""},  // ipvsadm: a no-op, sorting is default
    {"ipip", 'i', Arg::kNone, Kind::kRefused, 0, kNoTunnel},
    {"fwmark-service", 'f', Arg::kRequired, Kind::kRefused, 0, kNoFwmark},
    {"ipv6", '6', Arg::kNone, Kind::kRefused, 0, kNoFwmark},
    {"sctp-service", '\0', Arg::kRequired, Kind::kRefused, 0,
     "SCTP services are not supported by vsc; use -t or -u"},
    {"pe", '\0', Arg::kRequired, Kind::kRefused, 0,
     "--pe (persistence engines such as sip) is not supported by vsc; use -p and -M"},
    {"sched-flags", 'b', Arg::kRequired, Kind::kRefused, 0,
     "-b (scheduler flags) is not supported by vsc: its sh always falls back to the next live "
     "server and hashes the client address only; remove -b"},
    {"start-daemon", '\0', Arg::kRequired, Kind::kRefused, 0, kNoDaemon},
    {"stop-daemon", '\0', Arg::kRequired, Kind::kRefused, 0, kNoDaemon},
};

const Spec* FindLong(std::string_view name) {
  for (const Spec& s : kSpecs) {
    if (!s.long_name.empty() && s.long_name == name) return &s;
  }
  return nullptr;
}

const Spec* FindShort(char c) {
  for (const Spec& s : kSpecs) {
    if (s.short_name == c) return &s;
  }
  return nullptr;
}

struct Seen {
  bool set = false;
  char which = '\0';  // the short name that set it: 't'/'u', 'g'/'m'
  std::optional<std::string> value;
};

// The options of one invocation, as ipvsadm's set_command()/set_option() record them.
struct Collected {
  std::optional<Verb> verb;
  std::array<Seen, kOptCount> opts;
  std::vector<std::string> positional;
};

Status Record(const Spec& spec, std::optional<std::string> value, Collected& out) {
  switch (spec.kind) {
    case Kind::kVerb:
      if (out.verb) return InvalidArgument("multiple commands specified");
      out.verb = static_cast<Verb>(spec.id);
      return Status::Ok();
    case Kind::kOpt: {
      Seen& seen = out.opts[spec.id];
      if (seen.set) {
        return InvalidArgument("multiple '" + std::string(kOptNames[spec.id]) +
                               "' options specified");
      }
      seen = Seen{true, spec.short_name, std::move(value)};
      return Status::Ok();
    }
    case Kind::kRefused:
      return InvalidArgument(std::string(spec.why));
    case Kind::kIgnored:
      return Status::Ok();
  }
  return Status::Ok();
}

std::string Dash(const Spec& s) {
  return s.short_name ? std::string("-") + s.short_name : "--" + std::string(s.long_name);
}

// The value of an option that takes one: attached (-w3, --weight=3) or the next argument; for
// ipvsadm's optional -p value, the next argument only when it does not start with '-'.
Result<std::optional<std::string>> TakeValue(const Spec& spec,
                                             std::optional<std::string_view> attached,
                                             std::span<const std::string> args, size_t& i) {
  if (attached) {
    if (spec.arg == Arg::kNone) {
      return InvalidArgument("option `" + Dash(spec) + "' takes no value");
    }
    return std::optional<std::string>(std::string(*attached));
  }
  if (spec.arg == Arg::kNone) return std::optional<std::string>();
  const bool next_ok = i + 1 < args.size() && !(spec.arg == Arg::kOptional &&
                                                !args[i + 1].empty() && args[i + 1][0] == '-');
  if (next_ok) return std::optional<std::string>(args[++i]);
  if (spec.arg == Arg::kOptional) return std::optional<std::string>();
  return InvalidArgument("option `" + Dash(spec) + "' needs a value, e.g. " + Dash(spec) +
                         (spec.id == kService ? " 10.0.0.1:80" : " 1"));
}

Status CollectShortGroup(std::span<const std::string> args, size_t& i, Collected& out) {
  const std::string& a = args[i];
  for (size_t j = 1; j < a.size(); ++j) {
    const Spec* spec = FindShort(a[j]);
    if (!spec) return InvalidArgument("invalid option `-" + std::string(1, a[j]) + "'");
    std::optional<std::string_view> attached;
    if (spec->arg != Arg::kNone && j + 1 < a.size()) {
      attached = std::string_view(a).substr(j + 1);
    }
    VSC_ASSIGN_OR_RETURN(std::optional<std::string> value, TakeValue(*spec, attached, args, i));
    VSC_RETURN_IF_ERROR(Record(*spec, std::move(value), out));
    if (spec->arg != Arg::kNone) break;
  }
  return Status::Ok();
}

Result<Collected> Collect(std::span<const std::string> args) {
  Collected out;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a.size() > 2 && a.starts_with("--")) {
      const std::string_view body = std::string_view(a).substr(2);
      const size_t eq = body.find('=');
      const Spec* spec = FindLong(body.substr(0, eq));
      if (!spec) return InvalidArgument("invalid option `" + a + "'");
      std::optional<std::string_view> attached;
      if (eq != std::string_view::npos) attached = body.substr(eq + 1);
      VSC_ASSIGN_OR_RETURN(std::optional<std::string> value, TakeValue(*spec, attached, args, i));
      VSC_RETURN_IF_ERROR(Record(*spec, std::move(value), out));
    } else if (a.size() > 1 && a[0] == '-' && a[1] != '-') {
      VSC_RETURN_IF_ERROR(CollectShortGroup(args, i, out));
    } else if (a.starts_with("-")) {
      return InvalidArgument("invalid option `" + a + "'");
    } else {
      out.positional.push_back(a);
    }
  }
  return out;
}

// generic_opt_check(): the first option (in ipvsadm's order) that the command may not take,
// or must take, is the error.
Status CheckLegal(Verb verb, const Collected& c) {
  const std::string_view row = kLegal[static_cast<size_t>(verb)];
  const std::string cmd(kVerbNames[static_cast<size_t>(verb)]);
  int exclusive = -1;
  for (size_t j = 0; j < kOptCount; ++j) {
    const std::string opt(kOptNames[j]);
    if (!c.opts[j].set) {
      if (row[j] == '+') {
        return InvalidArgument("You need to supply the '" + opt + "' option for the '" + cmd +
                               "' command");
      }
      continue;
    }
    if (row[j] == 'x') {
      return InvalidArgument("Illegal '" + opt + "' option with the '" + cmd + "' command");
    }
    if (row[j] == '1') {
      if (exclusive >= 0) {
        return InvalidArgument("The option '" + opt + "' conflicts with the '" +
                               std::string(kOptNames[exclusive]) + "' option in the '" + cmd +
                               "' command");
      }
      exclusive = static_cast<int>(j);
    }
  }
  return Status::Ok();
}

Result<uint32_t> Number(const Seen& seen, uint64_t min, uint64_t max, std::string_view error) {
  const std::optional<uint64_t> n = ParseDecimal(seen.value.value_or(""), max);
  if (!n || *n < min) {
    return InvalidArgument(std::string(error) + ": '" + seen.value.value_or("") + "'; use " +
                           std::to_string(min) + ".." + std::to_string(max));
  }
  return static_cast<uint32_t>(*n);
}

Result<AddrPort> Address(const Seen& seen, std::string_view which, uint16_t default_port) {
  Result<ParsedAddrPort> ap = ParseAddrPort(seen.value.value_or(""));
  if (!ap.ok()) {
    return InvalidArgument("illegal " + std::string(which) +
                           " address[:port] specified: " + ap.status().message());
  }
  return AddrPort{ap->addr, ap->port.value_or(default_port)};
}

Status ParseServiceOptions(const Collected& c, Command& cmd) {
  const auto& o = c.opts;
  if (o[kService].set) {
    VSC_ASSIGN_OR_RETURN(AddrPort vip, Address(o[kService], "virtual server", 0));
    cmd.service =
        ServiceKey{o[kService].which == 't' ? Proto::kTcp : Proto::kUdp, vip.addr, vip.port};
  }
  if (o[kScheduler].set) cmd.scheduler = *o[kScheduler].value;
  if (o[kPersistent].set) {
    cmd.persistent = kDefaultPersistenceTimeout;
    if (o[kPersistent].value) {
      const std::optional<uint64_t> t = ParseDecimal(*o[kPersistent].value, kMaxPersistenceTimeout);
      if (!t || *t < 1) {
        return InvalidArgument("invalid timeout value `" + *o[kPersistent].value +
                               "' specified; use -p 1..2678400 (seconds)");
      }
      cmd.persistent = static_cast<uint32_t>(*t);
    }
  }
  if (o[kNetmask].set) {
    const Family family = cmd.service ? cmd.service->vip.family() : Family::kV4;
    Result<int> prefix = ParseNetmask(*o[kNetmask].value, family);
    if (!prefix.ok()) {
      return InvalidArgument(std::string(family == Family::kV6
                                             ? "illegal ipv6 netmask specified: "
                                             : "illegal virtual server persistent mask "
                                               "specified: ") +
                             prefix.status().message());
    }
    cmd.netmask_prefix = *prefix;
  }
  cmd.one_packet = o[kOps].set;
  return Status::Ok();
}

Status ParseServerOptions(const Collected& c, Command& cmd) {
  const auto& o = c.opts;
  if (o[kServer].set) {
    // parse_service(): "copy vport to dport if not specified".
    const uint16_t vport = cmd.service ? cmd.service->port : 0;
    VSC_ASSIGN_OR_RETURN(cmd.real_server, Address(o[kServer], "real server", vport));
  }
  if (o[kForward].set) cmd.method = o[kForward].which == 'g' ? Method::kDr : Method::kNat;
  if (o[kWeight].set) {
    VSC_ASSIGN_OR_RETURN(cmd.weight, Number(o[kWeight], 0, kMaxWeight, "illegal weight specified"));
  }
  if (o[kUThreshold].set) {
    VSC_ASSIGN_OR_RETURN(cmd.u_threshold,
                         Number(o[kUThreshold], 0, kMaxThreshold, "illegal u_threshold specified"));
  }
  if (o[kLThreshold].set) {
    VSC_ASSIGN_OR_RETURN(cmd.l_threshold,
                         Number(o[kLThreshold], 0, kMaxThreshold, "illegal l_threshold specified"));
  }
  return Status::Ok();
}

Status ParsePositional(const Collected& c, Command& cmd) {
  size_t used = 0;
  if (cmd.verb == Verb::kSetTimeouts) {
    if (c.positional.size() < 3) return InvalidArgument("--set option requires 3 timeout values");
    uint32_t* out[3] = {&cmd.timeouts.tcp, &cmd.timeouts.tcpfin, &cmd.timeouts.udp};
    for (; used < 3; ++used) {
      const std::optional<uint64_t> t = ParseDecimal(c.positional[used], kMaxPersistenceTimeout);
      if (!t) {
        return InvalidArgument("invalid timeout value `" + c.positional[used] +
                               "' specified; use 0..2678400 seconds (0 keeps the current value)");
      }
      *out[used] = static_cast<uint32_t>(*t);
    }
  }
  if (used < c.positional.size()) {
    return InvalidArgument("unexpected argument " + c.positional[used]);
  }
  return Status::Ok();
}

// process_options(): the checks ipvsadm makes once every option is known.
Status CheckCombination(const Command& cmd) {
  if (cmd.verb == Verb::kAddService || cmd.verb == Verb::kEditService) {
    if (cmd.service->port == 0 && !cmd.persistent) {
      return InvalidArgument("Zero port specified for non-persistent service");
    }
    if (cmd.one_packet && cmd.service->proto != Proto::kUdp) {
      return InvalidArgument("One-Packet Scheduling is only for UDP virtual services");
    }
    if (cmd.netmask_prefix && !cmd.persistent) {
      return InvalidArgument("-M (netmask) applies to persistent services only; add -p [timeout]");
    }
  }
  if (cmd.verb == Verb::kList && cmd.list.connections && (cmd.list.stats || cmd.list.rate)) {
    return InvalidArgument("options conflicts in the list command");
  }
  return Status::Ok();
}

}  // namespace

std::string_view VerbName(Verb verb) { return kVerbNames[static_cast<size_t>(verb)]; }

Result<Command> ParseArgs(std::span<const std::string> args) {
  VSC_ASSIGN_OR_RETURN(Collected c, Collect(args));
  Command cmd;
  if (!c.verb) {
    if (!args.empty()) {
      return InvalidArgument(
          "no command given; start with one of -A -E -D -a -e -d -C -L -S -R -Z or --set");
    }
    c.verb = Verb::kList;  // ipvsadm with no arguments lists the table
  }
  cmd.verb = *c.verb;
  VSC_RETURN_IF_ERROR(ParseServiceOptions(c, cmd));
  VSC_RETURN_IF_ERROR(ParseServerOptions(c, cmd));
  VSC_RETURN_IF_ERROR(ParsePositional(c, cmd));
  VSC_RETURN_IF_ERROR(CheckLegal(cmd.verb, c));
  cmd.list = ListFlags{c.opts[kNumeric].set, c.opts[kConnection].set, c.opts[kTimeout].set,
                       c.opts[kStats].set,   c.opts[kRate].set,       c.opts[kExact].set};
  VSC_RETURN_IF_ERROR(CheckCombination(cmd));
  return cmd;
}

ServiceConfig ToServiceConfig(const Command& command) {
  ServiceConfig config;
  if (!command.scheduler.empty()) config.scheduler = command.scheduler;
  if (command.persistent) {
    const int host = command.service ? command.service->vip.max_prefix() : 32;
    config.persistence = Persistence{*command.persistent, command.netmask_prefix.value_or(host)};
  }
  config.one_packet = command.one_packet;
  return config;
}

DestConfig ToDestConfig(const Command& command) {
  DestConfig config;
  config.method = command.method.value_or(Method::kNat);
  config.weight = command.weight.value_or(1);
  config.u_threshold = command.u_threshold.value_or(0);
  config.l_threshold = command.l_threshold.value_or(0);
  return config;
}

}  // namespace vsc::vservice

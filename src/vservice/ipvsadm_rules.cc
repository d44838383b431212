#include "vservice/ipvsadm_rules.h"

#include <utility>

// Formats from ipvsadm.c (louygan/ipvsadm @0c7a7fc) print_service_entry() with FMT_RULE:
// "-A %s -s %s", " -p %u", " -M %s" (IPv4, inet_ntoa) or " -M %i" (IPv6) when the mask is not
// the host mask, " -o"; destinations "-a %s -r %s %s -w %d" with fwd_switch() "-g"/"-m";
// addrport_to_anyname() with FMT_NUMERIC "%s%s%s:%u" (brackets for IPv6). Restore follows
// restore_table() and config_stream_read().

namespace vsc::vservice {
namespace {

std::string ServiceSpec(const ServiceKey& key) {
  return (key.proto == Proto::kTcp ? "-t " : "-u ") + ToString(key.vip_port());
}

void SaveService(const VirtualService& s, std::string& out) {
  const std::string spec = ServiceSpec(s.key);
  out += "-A " + spec + " -s " + s.config.scheduler;
  if (const auto& p = s.config.persistence) {
    out += " -p " + std::to_string(p->timeout_s);
    if (p->prefix_len != s.key.vip.max_prefix()) {
      out += " -M " + FormatNetmask(p->prefix_len, s.key.vip.family());
    }
  }
  if (s.config.one_packet) out += " -o";
  out += '\n';
  for (const auto& [addr, d] : s.dests) {
    out += "-a " + spec + " -r " + ToString(addr) + (d.method == Method::kDr ? " -g" : " -m") +
           " -w " + std::to_string(d.weight);
    if (d.u_threshold != 0) out += " -x " + std::to_string(d.u_threshold);
    if (d.l_threshold != 0) out += " -y " + std::to_string(d.l_threshold);
    out += '\n';
  }
}

// One line's arguments: whitespace-separated words up to a '#', without a leading "ipvsadm".
std::vector<std::string> Words(std::string_view line) {
  line = line.substr(0, line.find('#'));
  std::vector<std::string> words;
  size_t i = 0;
  while (i < line.size()) {
    const size_t start = line.find_first_not_of(" \t\r\v\f", i);
    if (start == std::string_view::npos) break;
    const size_t end = std::min(line.find_first_of(" \t\r\v\f", start), line.size());
    words.emplace_back(line.substr(start, end - start));
    i = end;
  }
  if (!words.empty() && words.front() == "ipvsadm") words.erase(words.begin());
  return words;
}

bool ChangesTable(Verb verb) {
  switch (verb) {
    case Verb::kAddService:
    case Verb::kEditService:
    case Verb::kDelService:
    case Verb::kAddDest:
    case Verb::kEditDest:
    case Verb::kDelDest:
    case Verb::kClear:
      return true;
    default:
      return false;
  }
}

std::string NotATableChange(Verb verb) {
  return "the '" + std::string(VerbName(verb)) +
         "' command does not change the table; a rules file holds -A -E -D -a -e -d -C only";
}

}  // namespace

std::string SaveRules(const VirtualServiceTable& table) {
  std::string out;
  for (const auto& [key, service] : table.services()) SaveService(service, out);
  return out;
}

Result<std::vector<RuleLine>> ParseRules(std::string_view text) {
  std::vector<RuleLine> rules;
  size_t line_no = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t nl = std::min(text.find('\n', pos), text.size());
    const std::vector<std::string> words = Words(text.substr(pos, nl - pos));
    pos = nl + 1;
    ++line_no;
    if (words.empty()) continue;
    Result<Command> cmd = ParseArgs(words);
    if (cmd.ok() && !ChangesTable(cmd->verb)) cmd = InvalidArgument(NotATableChange(cmd->verb));
    if (!cmd.ok()) return cmd.status().Annotate("line " + std::to_string(line_no));
    rules.push_back(RuleLine{line_no, std::move(cmd).value()});
  }
  return rules;
}

Result<Change> Apply(VirtualServiceTable& table, const Command& cmd) {
  switch (cmd.verb) {
    case Verb::kAddService:
      return table.AddService(*cmd.service, ToServiceConfig(cmd));
    case Verb::kEditService: {
      ServiceConfig config = ToServiceConfig(cmd);
      if (const VirtualService* s = table.Find(*cmd.service)) {
        config.sorry_server = s->config.sorry_server;
      }
      return table.EditService(*cmd.service, config);
    }
    case Verb::kDelService:
      return table.DelService(*cmd.service);
    case Verb::kAddDest:
      return table.AddDest(*cmd.service, *cmd.real_server, ToDestConfig(cmd));
    case Verb::kEditDest: {
      DestConfig config = ToDestConfig(cmd);
      if (const VirtualService* s = table.Find(*cmd.service)) {
        if (auto it = s->dests.find(*cmd.real_server); it != s->dests.end()) {
          config.agent_id = it->second.agent_id;
          config.check = it->second.check;
          config.shutdown_sessions = it->second.shutdown_sessions;
        }
      }
      return table.EditDest(*cmd.service, *cmd.real_server, config);
    }
    case Verb::kDelDest:
      return table.DelDest(*cmd.service, *cmd.real_server);
    case Verb::kClear:
      return table.Clear();
    default:
      return InvalidArgument(NotATableChange(cmd.verb));
  }
}

Result<std::vector<Change>> RestoreRules(VirtualServiceTable& table, std::string_view text) {
  VSC_ASSIGN_OR_RETURN(std::vector<RuleLine> rules, ParseRules(text));
  VirtualServiceTable staged = table;
  std::vector<Change> changes;
  changes.reserve(rules.size());
  for (const RuleLine& rule : rules) {
    Result<Change> change = Apply(staged, rule.command);
    if (!change.ok()) return change.status().Annotate("line " + std::to_string(rule.line));
    changes.push_back(std::move(change).value());
  }
  table = std::move(staged);
  return changes;
}

Result<VirtualServiceTable> ReplaceFromRules(const VirtualServiceTable& current,
                                             std::string_view text) {
  VirtualServiceTable next(current.limits());
  VSC_RETURN_IF_ERROR(RestoreRules(next, text).status());
  VirtualServiceTable kept = next;
  for (const auto& [key, service] : next.services()) {
    const VirtualService* old = current.Find(key);
    if (old == nullptr) continue;
    ServiceConfig config = service.config;
    config.sorry_server = old->config.sorry_server;
    VSC_RETURN_IF_ERROR(kept.EditService(key, config).status());
    for (const auto& [addr, dest] : service.dests) {
      auto it = old->dests.find(addr);
      if (it == old->dests.end()) continue;
      DestConfig d = dest;
      d.agent_id = it->second.agent_id;
      d.check = it->second.check;
      d.shutdown_sessions = it->second.shutdown_sessions;
      VSC_RETURN_IF_ERROR(kept.EditDest(key, addr, d).status());
    }
  }
  return kept;
}

}  // namespace vsc::vservice

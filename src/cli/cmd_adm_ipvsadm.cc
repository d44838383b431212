// vsc adm with ipvsadm's own options (issue 12): `vsc adm -A -t 10.0.0.1:80 -s rr`,
// `vsc adm -L -n --stats`, `vsc adm -S -n > rules`, `vsc adm -R < rules`. The command line
// is parsed by vservice::ParseArgs, carried out through the admin API's /v1/services routes
// (director/ipvsadm_request.h) and listed as ipvsadm lists (director/service_listing.h).
// Exit codes as ipvsadm's: 0 done, 2 a command-line error (ipvsadm's fail()), 255 refused by
// the director (ipvsadm returns -1 when the kernel refuses), 2 when no director answers.
// --director, --admin-port, --admin and --token-file may appear anywhere.
#include <cstdio>
#include <iostream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/adm_client.h"
#include "cli/commands.h"
#include "director/ipvsadm_request.h"
#include "director/service_listing.h"
#include "vservice/ipvsadm_args.h"

namespace vsc::cli {
namespace {

constexpr int kUsageError = 2;
constexpr int kRefused = 255;

// Takes vsc's own connection options out of `args` into `target`.
Status TakeConnectionOptions(std::vector<std::string>& args, AdminTarget& target) {
  std::vector<std::string> rest;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    std::string name = a, value;
    bool attached = false;
    if (const size_t eq = a.find('='); a.rfind("--", 0) == 0 && eq != std::string::npos) {
      name = a.substr(0, eq);
      value = a.substr(eq + 1);
      attached = true;
    }
    if (name != "--director" && name != "--admin-port" && name != "--admin" &&
        name != "--token-file") {
      rest.push_back(a);
      continue;
    }
    if (!attached) {
      if (i + 1 >= args.size()) return InvalidArgument("option " + name + " needs a value");
      value = args[++i];
    }
    if (name == "--director") target.director = value;
    if (name == "--admin") target.admin = value;
    if (name == "--token-file") target.token_file = value;
    if (name == "--admin-port") {
      auto port = vservice::ParseDecimal(value, 65535);
      if (!port) return InvalidArgument("--admin-port '" + value + "' is not a port");
      target.admin_port = static_cast<uint16_t>(*port);
    }
  }
  args = std::move(rest);
  return Status::Ok();
}

}  // namespace

bool IsIpvsadmStyle(const std::vector<std::string>& adm_args) {
  std::vector<std::string> args = adm_args;
  AdminTarget ignored;
  if (!TakeConnectionOptions(args, ignored).ok()) return false;
  if (args.empty()) return true;  // `vsc adm` alone lists, as `ipvsadm` alone does
  const std::string& first = args.front();
  return first.size() > 1 && first[0] == '-' && first != "-h" && first != "--help";
}

int RunIpvsadm(std::vector<std::string> args) {
  AdminTarget target;
  if (Status s = TakeConnectionOptions(args, target); !s.ok()) {
    std::fprintf(stderr, "%s\n", s.message().c_str());
    return kUsageError;
  }
  auto command = vservice::ParseArgs(args);
  if (!command.ok()) {
    std::fprintf(stderr, "%s\n", command.status().message().c_str());
    return kUsageError;
  }
  std::string rules;
  if (command->verb == vservice::Verb::kRestore) {
    rules.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  }
  auto request = director::RequestFor(*command, rules);
  if (!request.ok()) {
    std::fprintf(stderr, "%s\n", request.status().message().c_str());
    return kUsageError;
  }
  auto answer = SendAdmin(target, request->method, request->target, request->body);
  if (!answer.ok()) {
    std::fprintf(stderr, "Can't reach the director: %s\n", answer.status().ToString().c_str());
    return kUsageError;
  }
  if (answer->status != 200) {
    std::fprintf(stderr, "%s\n", AnswerError(*answer).c_str());
    return kRefused;
  }
  if (command->verb == vservice::Verb::kSave) std::fputs(answer->body.c_str(), stdout);
  if (command->verb == vservice::Verb::kList) {
    auto j = nlohmann::json::parse(answer->body, nullptr, false);
    if (j.is_discarded()) {
      std::fprintf(stderr, "the director answered something that is not JSON\n");
      return kRefused;
    }
    const vservice::ListFlags& f = command->list;
    std::fputs((f.connections ? director::RenderConnections(j)
                : f.timeouts  ? director::RenderTimeouts(j)
                              : director::RenderServices(j, f))
                   .c_str(),
               stdout);
  }
  return 0;
}

}  // namespace vsc::cli

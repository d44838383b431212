// ParseArgs: ipvsadm's command line as a Command value, so `vsc adm` takes ipvsadm's own options
// and an operator's muscle memory and scripts work (shared/reference/virtual_services.md §1.1).
//
//   -A|-E -t|-u VIP:PORT [-s SCHED] [-p [TIMEOUT]] [-M NETMASK] [-o]
//   -D -t|-u VIP:PORT
//   -a|-e -t|-u VIP:PORT -r RIP[:PORT] [-g|-m] [-w W] [-x U] [-y L]
//   -d -t|-u VIP:PORT -r RIP[:PORT]
//   -C   -S [-n]   -R   -Z [-t|-u VIP:PORT]   --set TCP TCPFIN UDP
//   -L|-l [-t|-u VIP:PORT | -c | --timeout] [-n] [--stats|--rate] [--exact]
//
// Long forms (--add-service ...), grouped short flags (-Ln), attached values (-w3, --weight=3)
// and ipvsadm's optional -p value (taken when the next argument does not start with '-') all
// work. Which options each command takes, and the error texts, follow ipvsadm.c's
// commands_v_options table and fail() messages. Differences, each refused with a clear error
// rather than accepted and ignored: addresses and ports are numeric (no name lookups);
// -i (tunnelling), -f (firewall marks), --sctp-service, --pe and -b have no user-space
// equivalent. -O is accepted as well as ipvsadm's -o. No arguments at all means -L, as ipvsadm.
//
// Pure: Result<Command> or InvalidArgument.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "common/status.h"
#include "vservice/ip_address.h"
#include "vservice/service_key.h"
#include "vservice/virtual_service_table.h"

namespace vsc::vservice {

// In ipvsadm's CMD_* order; VerbName gives its cmdnames[] text ("add-service", "flush"...).
enum class Verb : uint8_t {
  kAddService,
  kEditService,
  kDelService,
  kClear,
  kList,
  kAddDest,
  kDelDest,
  kEditDest,
  kSetTimeouts,
  kRestore,
  kSave,
  kZero,
};
std::string_view VerbName(Verb verb);

struct ListFlags {
  bool numeric = false;      // -n
  bool connections = false;  // -c
  bool timeouts = false;     // --timeout
  bool stats = false;        // --stats
  bool rate = false;         // --rate
  bool exact = false;        // --exact / -X
  friend bool operator==(const ListFlags&, const ListFlags&) = default;
};

// ipvsadm --set: seconds, 0 = keep the current value.
struct Timeouts {
  uint32_t tcp = 0;
  uint32_t tcpfin = 0;
  uint32_t udp = 0;
  friend bool operator==(const Timeouts&, const Timeouts&) = default;
};

struct Command {
  Verb verb = Verb::kList;
  std::optional<ServiceKey> service;    // -t / -u
  std::string scheduler;                // -s; empty = not given
  std::optional<uint32_t> persistent;   // -p [timeout]; the default timeout when given bare
  std::optional<int> netmask_prefix;    // -M, as a prefix length of the service's family
  bool one_packet = false;              // -o
  std::optional<AddrPort> real_server;  // -r; a missing port copies the service's port
  std::optional<Method> method;         // -g / -m
  std::optional<uint32_t> weight;       // -w
  std::optional<uint32_t> u_threshold;  // -x
  std::optional<uint32_t> l_threshold;  // -y
  ListFlags list;                       // -n, -c, --stats, --rate, --exact (-L and -S)
  Timeouts timeouts;                    // --set
  friend bool operator==(const Command&, const Command&) = default;
};

// `args` excludes the program name.
Result<Command> ParseArgs(std::span<const std::string> args);

// The configuration ipvsadm's -A/-E sets from a command: every option not given takes its
// default (scheduler wlc, no persistence, netmask /32 or /128), as ipvsadm does.
ServiceConfig ToServiceConfig(const Command& command);
// The configuration ipvsadm's -a/-e sets: method nat, weight 1 and no thresholds unless given.
DestConfig ToDestConfig(const Command& command);

}  // namespace vsc::vservice

#include "director/service_metrics.h"

#include <cstdint>
#include <string>

namespace vsc::director {
namespace {

// Label values as Prometheus's text format needs them: \ " and newline escaped.
std::string Escape(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

void Header(std::ostream& o, const char* name, const char* type, const char* help) {
  o << "# HELP " << name << " " << help << "\n# TYPE " << name << " " << type << "\n";
}

template <typename Value>
void PerService(std::ostream& o, const std::vector<ServiceRuntime>& services, const char* name,
                const char* extra, Value value) {
  for (const ServiceRuntime& s : services) {
    o << name << "{service=\"" << vservice::KeyText(s.key) << "\"" << extra << "} " << value(s)
      << "\n";
  }
}

template <typename Value>
void PerDest(std::ostream& o, const std::vector<ServiceRuntime>& services, const char* name,
             const char* extra, Value value) {
  for (const ServiceRuntime& s : services) {
    for (const DestRuntime& d : s.dests) {
      o << name << "{service=\"" << vservice::KeyText(s.key) << "\",server=\""
        << vservice::ToString(d.dest) << "\"" << extra << "} " << value(d) << "\n";
    }
  }
}

}  // namespace

void WriteServiceMetrics(std::ostream& o, const std::vector<ServiceRuntime>& services) {
  using S = const ServiceRuntime&;
  using D = const DestRuntime&;
  Header(o, "vsc_service_connections_total", "counter",
         "Connections (TCP) or sessions (UDP) scheduled by a virtual service.");
  PerService(o, services, "vsc_service_connections_total", "", [](S s) { return s.connections; });
  Header(o, "vsc_service_packets_total", "counter", "Packets through a virtual service.");
  PerService(o, services, "vsc_service_packets_total", ",direction=\"in\"",
             [](S s) { return s.packets_in; });
  PerService(o, services, "vsc_service_packets_total", ",direction=\"out\"",
             [](S s) { return s.packets_out; });
  Header(o, "vsc_service_bytes_total", "counter", "Bytes through a virtual service.");
  PerService(o, services, "vsc_service_bytes_total", ",direction=\"in\"",
             [](S s) { return s.bytes_in; });
  PerService(o, services, "vsc_service_bytes_total", ",direction=\"out\"",
             [](S s) { return s.bytes_out; });
  Header(o, "vsc_service_refused_total", "counter",
         "Clients refused by a virtual service: no usable destination and no sorry server "
         "(no_server), or the director out of descriptors (no_descriptor, closed at once).");
  PerService(o, services, "vsc_service_refused_total", ",reason=\"no_server\"",
             [](S s) { return s.no_dest; });
  PerService(o, services, "vsc_service_refused_total", ",reason=\"no_descriptor\"",
             [](S s) { return s.no_descriptor; });
  Header(o, "vsc_service_flows_ended_total", "counter",
         "Open connections or UDP sessions closed by the director when their destination was "
         "removed (expire_nodest_conn) or marked down (on_marked_down = shutdown-sessions).");
  PerService(o, services, "vsc_service_flows_ended_total", "", [](S s) { return s.flows_ended; });
  Header(o, "vsc_dest_up", "gauge",
         "1 when a destination takes new work (its check and membership both say so).");
  PerDest(o, services, "vsc_dest_up", "", [](D d) { return d.usable ? 1 : 0; });
  Header(o, "vsc_dest_weight", "gauge",
         "Effective weight of a destination (after inhibit_on_failure, misc_dynamic, drain).");
  PerDest(o, services, "vsc_dest_weight", "", [](D d) { return d.effective_weight; });
  Header(o, "vsc_dest_active_connections", "gauge", "Open connections (ipvsadm ActiveConn).");
  PerDest(o, services, "vsc_dest_active_connections", "", [](D d) { return d.active_conns; });
  Header(o, "vsc_dest_inactive_connections", "gauge", "ipvsadm InActConn.");
  PerDest(o, services, "vsc_dest_inactive_connections", "", [](D d) { return d.inactive_conns; });
  Header(o, "vsc_dest_connections_total", "counter", "Connections scheduled to a destination.");
  PerDest(o, services, "vsc_dest_connections_total", "", [](D d) { return d.connections; });
  Header(o, "vsc_dest_bytes_total", "counter", "Bytes to and from a destination.");
  PerDest(o, services, "vsc_dest_bytes_total", ",direction=\"in\"", [](D d) { return d.bytes_in; });
  PerDest(o, services, "vsc_dest_bytes_total", ",direction=\"out\"",
          [](D d) { return d.bytes_out; });
  Header(o, "vsc_dest_passive_failures_total", "counter",
         "Flows whose destination failed them (the passive check): a TCP connect that failed "
         "(redispatched), a UDP datagram answered port unreachable (its session moved).");
  PerDest(o, services, "vsc_dest_passive_failures_total", ",reason=\"connect_failed\"",
          [](D d) { return d.connect_failures; });
  PerDest(o, services, "vsc_dest_passive_failures_total", ",reason=\"port_unreachable\"",
          [](D d) { return d.unreachable; });
  Header(o, "vsc_dest_state", "gauge",
         "1 for a destination's current state and last check result (labels state, check).");
  for (const ServiceRuntime& s : services) {
    for (const DestRuntime& d : s.dests) {
      o << "vsc_dest_state{service=\"" << vservice::KeyText(s.key) << "\",server=\""
        << vservice::ToString(d.dest) << "\",state=\"" << Escape(d.state) << "\",check=\""
        << Escape(d.check_result) << "\"} 1\n";
    }
  }
}

}  // namespace vsc::director

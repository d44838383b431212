#include "director/stats.h"

namespace vsc::director {

Totals& Totals::operator+=(const Totals& o) {
  conns += o.conns;
  in_packets += o.in_packets;
  out_packets += o.out_packets;
  in_bytes += o.in_bytes;
  out_bytes += o.out_bytes;
  active += o.active;
  return *this;
}

Totals SumServer(const std::vector<WorkerCounters*>& workers, int service, uint32_t slot) {
  Totals t;
  for (const WorkerCounters* w : workers) {
    const ServerCounters& s = w->servers[service][slot];
    t.conns += s.conns.Get();
    t.in_packets += s.in_packets.Get();
    t.out_packets += s.out_packets.Get();
    t.in_bytes += s.in_bytes.Get();
    t.out_bytes += s.out_bytes.Get();
    t.active += s.active.Get();
  }
  return t;
}

Totals SumService(const std::vector<WorkerCounters*>& workers, int service) {
  Totals t;
  for (const WorkerCounters* w : workers) {
    const ServiceCounters& s = w->services[service];
    t.conns += s.conns.Get();
    t.in_packets += s.in_packets.Get();
    t.out_packets += s.out_packets.Get();
    t.in_bytes += s.in_bytes.Get();
    t.out_bytes += s.out_bytes.Get();
  }
  return t;
}

void RateEstimator::Update(const std::string& key, const Totals& t, TimePoint now) {
  auto it = samples_.find(key);
  if (it == samples_.end()) {
    samples_[key] = Sample{t, now, {}};
    return;
  }
  Sample& s = it->second;
  const double secs = ToSeconds(now - s.at);
  if (secs <= 0) return;
  auto rate = [secs](uint64_t a, uint64_t b) { return b >= a ? static_cast<double>(b - a) / secs : 0.0; };
  s.rates.cps = rate(s.totals.conns, t.conns);
  s.rates.in_pps = rate(s.totals.in_packets, t.in_packets);
  s.rates.out_pps = rate(s.totals.out_packets, t.out_packets);
  s.rates.in_bps = rate(s.totals.in_bytes, t.in_bytes);
  s.rates.out_bps = rate(s.totals.out_bytes, t.out_bytes);
  s.totals = t;
  s.at = now;
}

Rates RateEstimator::Get(const std::string& key) const {
  auto it = samples_.find(key);
  return it == samples_.end() ? Rates{} : it->second.rates;
}

}  // namespace vsc::director

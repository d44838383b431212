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

namespace {

Totals ToTotals(uint64_t conns, uint64_t pin, uint64_t pout, uint64_t bin, uint64_t bout) {
  Totals t;
  t.conns = conns;
  t.in_packets = pin;
  t.out_packets = pout;
  t.in_bytes = bin;
  t.out_bytes = bout;
  return t;
}

}  // namespace

Totals ServiceTotals(const ServiceRuntime& r) {
  return ToTotals(r.connections, r.packets_in, r.packets_out, r.bytes_in, r.bytes_out);
}

Totals DestTotals(const DestRuntime& d) {
  Totals t = ToTotals(d.connections, d.packets_in, d.packets_out, d.bytes_in, d.bytes_out);
  t.active = d.active_conns;
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
  auto rate = [secs](uint64_t a, uint64_t b) {
    return b >= a ? static_cast<double>(b - a) / secs : 0.0;
  };
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

#include "director/sched_table_share.h"

#include <cstdlib>
#include <vector>

namespace vsc::director {

bool NeedsNewSchedTable(const ServiceView& previous, const ServiceView& next) {
  if (previous.config.scheduler != next.config.scheduler) return true;
  if (previous.dests.size() != next.dests.size()) return true;
  for (size_t i = 0; i < next.dests.size(); ++i) {
    const sched::Backend& a = previous.dests[i].backend;
    const sched::Backend& b = next.dests[i].backend;
    if (a.key != b.key || a.weight != b.weight) return true;
  }
  return false;
}

bool ShareSchedTable(const ServiceView* previous, ServiceView& next,
                     const sched::SchedulerOptions& options) {
  if (previous != nullptr && !NeedsNewSchedTable(*previous, next)) {
    next.sched_table = previous->sched_table;
    return false;
  }
  std::vector<sched::Backend> backends;
  backends.reserve(next.dests.size());
  for (const DestView& d : next.dests) backends.push_back(d.backend);
  auto table = sched::BuildSchedTable(next.config.scheduler, options, backends);
  if (!table.ok()) std::abort();  // the table validated the scheduler and its options
  next.sched_table = std::move(table).value();
  return next.sched_table != nullptr;
}

}  // namespace vsc::director

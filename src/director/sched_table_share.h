// ShareSchedTable: gives a new ServiceView its scheduler table (sh buckets, Maglev slots, the
// wrr cycle), built here, once, on the control thread, and read by every worker's DestPicker
// (DESIGN §4, CONVENTIONS 6). The table depends only on the scheduler and on the destinations'
// order, keys and weights, so a view that changes nothing else (load figures, check verdicts,
// availability, states) takes the previous view's table as it is: nothing is rebuilt.
//
// Pure: no I/O, no clock. Called on the control thread before the view is published.
#pragma once

#include "director/service_view.h"
#include "sched/scheduler.h"

namespace vsc::director {

// True when the table of a view with `next`'s scheduler and destinations would differ from
// the one built for `previous`.
bool NeedsNewSchedTable(const ServiceView& previous, const ServiceView& next);

// Sets next.sched_table: previous's when NeedsNewSchedTable says no, else a new one built with
// `options` (nullptr for schedulers that use none). Returns true when it built one. The
// scheduler name must be valid (the table validated it); an invalid one aborts.
bool ShareSchedTable(const ServiceView* previous, ServiceView& next,
                     const sched::SchedulerOptions& options);

}  // namespace vsc::director

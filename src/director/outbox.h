// The director's sessions write through net::Outbox (net/outbox.h), shared with the relay.
#pragma once

#include "net/outbox.h"

namespace vsc::director {
using net::Outbox;
}  // namespace vsc::director

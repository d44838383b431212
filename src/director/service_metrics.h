// Prometheus text for the virtual services (issue 12): per service (label `service`, the key
// text "tcp/10.0.0.1:80") and per destination (labels `service` and `server`, "ADDR:PORT"),
// from ServiceEditor::Runtime(): connections, packets and bytes, open connections, whether the
// destination is usable, its effective weight and its state / check result. Pure.
#pragma once

#include <ostream>
#include <vector>

#include "director/service_editor.h"

namespace vsc::director {

void WriteServiceMetrics(std::ostream& out, const std::vector<ServiceRuntime>& services);

}  // namespace vsc::director

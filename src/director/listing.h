// Listing: renders the director's /v1/status JSON the way `ipvsadm -L -n` renders IPVS tables
// (same columns and widths, see shared/reference/ipvsadm_sample_output.txt), with a State column
// added to the real-server rows. Pure: JSON in, text out.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace vsc::director {

enum class ListingMode { kTable, kStats, kRate };

std::string RenderListing(const nlohmann::json& status, ListingMode mode);

// One row of each kind, exposed for tests against the ipvsadm sample.
std::string ServiceLine(const std::string& proto, const std::string& address,
                        const std::string& scheduler, uint32_t persistent_s,
                        const std::string& netmask);
std::string ServerLine(const std::string& address, const std::string& forward, uint64_t weight,
                       uint64_t active, uint64_t inactive, const std::string& state);
std::string NumbersLine(const std::string& first, const std::string& address, double a, double b,
                        double c, double d, double e);

}  // namespace vsc::director

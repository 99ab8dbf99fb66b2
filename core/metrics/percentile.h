// Percentiles of per-step samples: linear interpolation between closest ranks (numpy's default),
// so that a hand computation can check every quartile Tunebench shows.
//
// The worker's done summary and the analysis' spreads both come from here. Nothing here knows
// about steps or events.
#pragma once

#include <vector>

namespace tunebench::metrics {

// q in [0, 1] (clamped) of values already sorted ascending; 0 for an empty vector.
double percentile_sorted(const std::vector<double>& sorted, double q);
// The same for unsorted values (sorts a copy).
double percentile(std::vector<double> values, double q);

}  // namespace tunebench::metrics

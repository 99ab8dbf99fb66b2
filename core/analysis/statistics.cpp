#include "core/analysis/statistics.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace tunebench::analysis {

double percentile_sorted(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0.0;
  q = std::clamp(q, 0.0, 1.0);
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  const double frac = pos - static_cast<double>(lo);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

Spread spread_of(std::vector<double> values) {
  Spread s;
  if (values.empty()) return s;
  std::sort(values.begin(), values.end());
  s.n = static_cast<int64_t>(values.size());
  s.median = percentile_sorted(values, 0.5);
  s.p25 = percentile_sorted(values, 0.25);
  s.p75 = percentile_sorted(values, 0.75);
  s.mean = std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
  s.min = values.front();
  s.max = values.back();
  return s;
}

Spread spread_of_value(double value) { return spread_of({value}); }

Spread pooled_spread(const std::vector<std::vector<double>>& samples) {
  std::vector<double> all;
  for (const auto& v : samples)
    all.insert(all.end(), v.begin(), v.end());
  return spread_of(std::move(all));
}

}  // namespace tunebench::analysis

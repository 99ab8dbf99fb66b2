#include "core/analysis/statistics.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/metrics/percentile.h"

namespace tunebench::analysis {

Spread spread_of(std::vector<double> values) {
  Spread s;
  if (values.empty()) return s;
  std::sort(values.begin(), values.end());
  s.n = static_cast<int64_t>(values.size());
  s.median = metrics::percentile_sorted(values, 0.5);
  s.p25 = metrics::percentile_sorted(values, 0.25);
  s.p75 = metrics::percentile_sorted(values, 0.75);
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

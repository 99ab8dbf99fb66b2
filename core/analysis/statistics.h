// Statistics of per-step samples: median, quartiles, mean, extremes.
//
// Every figure Tunebench shows carries its spread over the measured steps. Quartiles use linear
// interpolation between closest ranks (numpy's default), so a hand computation can check them.
// Repeated trials of one configuration are pooled by concatenating their samples before taking
// statistics (not by averaging medians). This file knows nothing about events or trials.
#pragma once

#include <cstdint>
#include <vector>

namespace tunebench::analysis {

struct Spread {
  int64_t n = 0;  // number of samples; 0 means "no data" and every other field is 0
  double median = 0.0;
  double p25 = 0.0;  // first quartile
  double p75 = 0.0;  // third quartile
  double mean = 0.0;
  double min = 0.0;
  double max = 0.0;

  double iqr() const { return p75 - p25; }
  bool empty() const { return n == 0; }
};

Spread spread_of(std::vector<double> values);
// One number with no spread (n = 1), for figures that are not per-step samples (peak memory).
Spread spread_of_value(double value);
// Pools repeated trials: the samples of all of them, as one population.
Spread pooled_spread(const std::vector<std::vector<double>>& samples);

}  // namespace tunebench::analysis

// TrialStats: the running numbers of the trials table (median step time, throughput), folded from
// step events as they arrive. Deliberately simple: issue 7's analysis owns the careful statistics
// (spread, exposed communication, MFU); this only keeps the table alive during a run.
#pragma once

#include <map>
#include <vector>

#include "ui/runner/runner_types.h"

namespace tunebench::ui {

class TrialStats {
 public:
  void add(const EventBatch& batch);
  void clear();

  // Median step time over measured (non-warm-up) steps of rank 0, NaN before the first one.
  double stepMsMedian() const;
  // Tokens per second of all ranks together: world x tokens per rank step / median step time.
  double tokensPerSecond() const;
  int worldSize() const { return m_worldSize; }

 private:
  std::vector<double> m_stepMs;
  int64_t m_tokensPerStep = 0;
  int m_worldSize = 1;
};

}  // namespace tunebench::ui

// TrialStats: the running numbers of the trials table (step time, throughput), folded from step
// events as they arrive. The step time is the trial's (analysis::trial_step_ms: per step the
// slowest rank, median over measured steps), the figure a stored trial's row, the comparison and
// the CLI show; the analysis owns the careful statistics (spread, exposed communication, MFU).
// Only step windows are kept (no intervals), so a long run costs a few numbers per step.
#pragma once

#include <map>
#include <vector>

#include "core/protocol/trial_log.h"
#include "ui/runner/runner_types.h"

namespace tunebench::ui {

class TrialStats {
 public:
  void add(const EventBatch& batch);
  void clear();

  // The trial's step time (analysis::trial_step_ms, median), NaN before the first measured step.
  double stepMsMedian() const;
  // Tokens per second of all ranks together: world x tokens per rank step / median step time.
  double tokensPerSecond() const;
  int worldSize() const { return m_worldSize; }

 private:
  protocol::TrialLog m_steps;  // each rank's measured steps, without intervals
  int64_t m_tokensPerStep = 0;
  int m_worldSize = 1;
};

}  // namespace tunebench::ui

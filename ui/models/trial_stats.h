// TrialStats: the running numbers of the trials table (step time, throughput), folded from step
// events as they arrive. Both are the analysis' own (analysis::trial_step_ms: per step the slowest
// rank, median over measured steps; analysis::trial_tokens_per_s: all ranks' tokens per step over
// that), the figures a stored trial's row, the comparison and the CLI show; the analysis owns the
// careful statistics (spread, exposed communication, MFU). Only step windows are kept (no
// intervals), so a long run costs a few numbers per step.
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
  // Tokens per second of all ranks together (analysis::trial_tokens_per_s), NaN while unknown.
  double tokensPerSecond() const;
  int worldSize() const { return m_worldSize; }

 private:
  protocol::TrialLog m_steps;  // each rank's hello and measured steps, without intervals
  int m_worldSize = 1;
};

}  // namespace tunebench::ui

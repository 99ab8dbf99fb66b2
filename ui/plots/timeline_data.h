// TimelineData: every interval received so far, one sorted row per rank and lane, in seconds since
// the trial's first event. Plain data (no widgets): the plottable draws it, tests and the
// benchmark fill it directly. Rows are kept sorted by start so drawing and hit-testing only touch
// the visible part (a binary search, then a walk).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ui/plots/timeline_geometry.h"
#include "ui/runner/runner_types.h"

namespace tunebench::ui {

struct TimelineBar {
  double start_s = 0.0;
  double end_s = 0.0;
  protocol::Phase phase = protocol::Phase::Other;
  int64_t bytes = 0;
  double busbw_gbps = 0.0;
  int64_t step = 0;
  std::string label;
};

// Where a step starts on the timeline (rank 0's clock): step markers and numbers on the axis.
struct StepMark {
  double t_s = 0.0;
  int64_t step = 0;
  bool warmup = false;
};

struct TimelineHit {
  int rank = 0;
  protocol::Lane lane = protocol::Lane::Compute;
  TimelineBar bar;
};

class TimelineData {
 public:
  void add(const EventBatch& batch);
  void clear();

  int ranks() const { return m_rows.ranks; }
  TimelineRows rows() const { return m_rows; }
  const std::vector<TimelineBar>& row(int index) const;
  size_t barCount() const { return m_barCount; }
  bool hasOrigin() const { return m_haveOrigin; }
  int64_t origin_us() const { return m_origin_us; }
  double latest_s() const { return m_latest_s; }
  double earliest_s() const { return m_barCount ? m_earliest_s : 0.0; }
  double lastStepDuration_s() const { return m_lastStep_s; }
  // Median duration of the last few measured steps of the lowest rank: what "a step" looks like
  // now. A warm-up step or a step cut short by Stop must not set the view's span.
  double typicalStepDuration_s() const;
  // Step starts of the lowest rank, sorted by time.
  const std::vector<StepMark>& stepMarks() const { return m_marks; }
  // Phases that occur in the data (for the legend).
  const std::vector<bool>& phasesSeen() const { return m_phasesSeen; }
  // False once a rank said hello from the CPU and none from a GPU: the legend's words
  // (config::device_noun). Without a hello (an imported trace): true.
  bool onGpu() const { return !(m_cpuHello && !m_gpuHello); }

  // Indices [first, last) of row `index` that may intersect [t0_s, t1_s].
  std::pair<size_t, size_t> visible(int index, double t0_s, double t1_s) const;
  // The bar of `row` at time `t_s` (within `tolerance_s` of its ends), if any.
  std::optional<TimelineHit> hit(int row, double t_s, double tolerance_s) const;

 private:
  void addStep(int rank, const protocol::Step& step);
  std::vector<TimelineBar>& rowFor(int rank, protocol::Lane lane);

  std::vector<std::vector<TimelineBar>> m_bars;  // by row index
  std::vector<double> m_maxDuration_s;           // by row: bounds the backwards search
  std::vector<int64_t> m_clockOffset_us;         // by rank, from hello
  std::vector<StepMark> m_marks;                 // of m_markRank
  std::vector<double> m_recentSteps_s;           // measured steps of m_markRank, newest last (a few)
  std::vector<bool> m_phasesSeen;
  int m_markRank = -1;
  bool m_cpuHello = false, m_gpuHello = false;
  TimelineRows m_rows{0};
  size_t m_barCount = 0;
  bool m_haveOrigin = false;
  int64_t m_origin_us = 0;
  double m_latest_s = 0.0;
  double m_earliest_s = 1e300;
  double m_lastStep_s = 0.0;
};

// Tooltip text for a hit: phase, rank and lane, duration, bytes and bus bandwidth.
QString describe_hit(const TimelineHit& hit);

}  // namespace tunebench::ui

// MemoryTimelinePlot: memory through a sampled step. The caching allocator's allocated and reserved
// bytes (GiB) through the forward, backward and optimizer of the latest memory-sampled step of one
// rank (Step::memory_timeline): each phase's start and end, and its peak marked in the middle of
// the phase (the allocator gives the peak, not its moment). The phases share the width evenly so a
// short optimizer stays readable; their host times are in the axis labels. A trial without such a
// step says why over the empty plot: the worker's reason (unknown on CPU), kernel sampling off, a
// CUDA graph's replayed steps, no sampled step yet, or none in a stored trial.
#pragma once

#include <map>
#include <optional>
#include <vector>

#include "core/config/trial_config.h"
#include "ui/plots/live_plot.h"
#include "ui/runner/runner_types.h"

class QLabel;

namespace tunebench::ui {

class MemoryTimelinePlot : public LivePlot {
  Q_OBJECT
 public:
  explicit MemoryTimelinePlot(QWidget* parent = nullptr);

  void addEvents(const EventBatch& batch);
  void clear();
  // The rank whose step is shown (the lowest rank shown on the timeline; 0 by default).
  void setRank(int rank);
  int rank() const { return m_rank; }
  // The whole trial is in the plot (a stored trial): no step will come, so an empty plot says so.
  void setComplete(bool complete);

  // Whether the rank shown has a step to draw (else the plot is its note).
  bool hasStep() const { return m_latest.count(m_rank) > 0; }
  // The step shown (-1: none), its points drawn: allocated and reserved through the phases'
  // starts and ends, and the phases' peaks.
  int64_t shownStep() const { return m_shownStep; }
  int allocatedPoints() const;
  int reservedPoints() const;
  int peakMarks() const;
  // The largest allocated peak drawn, GiB (0 when none).
  double largestPeakGiB() const;
  // The note over the plot ("" when a step is shown).
  QString note() const;

 protected:
  void beforeReplot() override;
  void applyPalette() override;

 private:
  struct Latest {
    int64_t step = -1;
    std::vector<protocol::MemoryTimelinePoint> points;
  };
  QString noteText() const;
  void rebuild();
  void placeNote();

  QCPAxisRect* m_rect = nullptr;
  QCPLayoutGrid* m_legendRow = nullptr;
  QCPGraph* m_allocated = nullptr;
  QCPGraph* m_reserved = nullptr;
  QCPGraph* m_allocatedPeaks = nullptr;
  QCPGraph* m_reservedPeaks = nullptr;
  QList<QCPAbstractItem*> m_items;  // phase bands and peak labels of the step shown
  QLabel* m_note = nullptr;
  std::map<int, Latest> m_latest;  // rank -> its latest step with a memory timeline
  std::optional<config::TrialConfig> m_config;
  bool m_cpu = false;        // a rank said its device is the CPU
  bool m_helloSeen = false;
  QString m_reason;          // the worker's memory-timeline warning
  int m_rank = 0;
  bool m_complete = false;
  bool m_stale = true;       // the shown rank's step changed: rebuild before the next replot
  int64_t m_shownStep = -1;
  double m_maxGiB = 0.0;
};

}  // namespace tunebench::ui

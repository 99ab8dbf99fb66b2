// Device telemetry over time: utilisation, memory and power per GPU (NVML samples), or CPU use
// and resident memory per rank on CPU runs (/proc samples). One series per device or rank.
// Beside NVML's utilisation (any kernel running during its sample period) the first panel shows
// the share of each kernel-sampled step the GPU actually ran kernels (Step::gpu_busy_ms), one
// point per sampled step and rank: a GPU that NVML calls 100 % busy may run kernels 14 % of it.
// NVML GPM's SM activity and tensor-core activity of each GPU (Hopper and newer) are drawn in the
// same panel; where the worker could not read them its reason is the note under the plot.
// A panel nothing can fill is not drawn empty: CPU ranks have no power reading, and a trial without
// samples (an imported trace) has none at all; a note over the plot says why.
#pragma once

#include <map>
#include <optional>

#include "ui/plots/live_plot.h"
#include "ui/runner/runner_types.h"

class QLabel;

namespace tunebench::ui {

class TelemetryPlot : public LivePlot {
  Q_OBJECT
 public:
  explicit TelemetryPlot(QWidget* parent = nullptr);

  void addEvents(const EventBatch& batch);
  void clear();

  bool cpuMode() const { return m_cpuMode; }
  // The labels before the first sample: a CPU machine's plot says CPU, not "GPU util".
  void setDefaultMode(bool cpu);
  int seriesCount() const { return int(m_series.size()); }
  int samples(const QString& series, int panel) const;  // panel 0 util, 1 memory, 2 power
  // Points of the GPU-busy series of `rank` (kernel-sampled steps), and its last value in %.
  int busyPoints(int rank) const;
  std::optional<double> lastBusyPct(int rank) const;
  // Points of GPU `index`'s SM activity (tensor: its tensor-core activity) series (NVML GPM).
  int activityPoints(int index, bool tensor) const;
  QCPAxisRect* panel(int i) const { return m_rects[i]; }
  // Panels shown: those that can have data (not power for CPU ranks), as many as there is room for.
  int shownPanels() const { return m_shown; }
  // The whole trial is in the plot (a stored trial): no sample will come, so an empty plot says so.
  void setComplete(bool complete);
  // The note over the plot ("" when none).
  QString note() const;

 protected:
  void beforeReplot() override;

 private:
  struct Series {
    QCPGraph* graphs[3] = {nullptr, nullptr, nullptr};
  };
  Series& series(const QString& name, int colorIndex);
  void setMode(bool cpu);
  void fitPanels();
  QString noteText() const;
  void placeNote();
  bool hasSamples(int panel) const;

  QCPAxisRect* m_rects[3] = {nullptr, nullptr, nullptr};
  std::map<QString, Series> m_series;
  std::map<int, QCPGraph*> m_busy;  // rank -> GPU busy of its sampled steps
  std::map<int, QCPGraph*> m_smActivity, m_tensorActivity;  // GPU index -> NVML GPM series
  QCPGraph* activityGraph(std::map<int, QCPGraph*>& graphs, int index, bool tensor);
  QString m_gpmProblem;  // the worker's `gpm` warning: why there is no SM or tensor-core activity
  bool m_haveOrigin = false;
  bool m_cpuMode = false;
  bool m_modeSet = false;
  bool m_defaultCpu = false;
  int m_shown = 3;
  bool m_complete = false;
  bool m_noteInLayout = false;
  QLabel* m_note = nullptr;
  QCPLayoutElement* m_noteRow = nullptr;  // the note's strip under the panels
  QCPLayoutGrid* m_legendRow = nullptr;   // the legend's strip over the panels
  int64_t m_origin_us = 0;
  double m_latest_s = 0.0;
  double m_max[3] = {0, 0, 0};
};

}  // namespace tunebench::ui

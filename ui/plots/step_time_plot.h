// Step time per step and rank (top) and throughput (bottom): tokens/s of all ranks together and
// per GPU, computed for a step once every rank has reported it (the slowest rank sets the pace).
// The step-time axis is scaled to the measured steps: a 3.5 s warm-up step would otherwise flatten
// 400 ms steps against the bottom; warm-up points above the range are clipped, their span shaded
// and labelled with their longest time. The throughput axis holds every point. The legends sit in a row above the plots, never on an axis.
// A step whose tokens are unknown (an imported trace without its settings) has no throughput
// point: the panel says "unknown" instead of drawing 0.
#pragma once

#include <map>

#include "ui/plots/live_plot.h"
#include "ui/runner/runner_types.h"

class QLabel;

namespace tunebench::ui {

class StepTimePlot : public LivePlot {
  Q_OBJECT
 public:
  static constexpr double kMaxStepsWithMarkers = 200;
  // Below this height the throughput panel is left out (two panels would be too flat to read).
  static constexpr int kTwoPanelHeight = 230;

  explicit StepTimePlot(QWidget* parent = nullptr);

  void addEvents(const EventBatch& batch);
  void clear();

  int stepPoints(int rank) const;  // points in rank's step-time graph
  int throughputPoints() const;
  // "tokens/s", or "samples/s" for a trial whose steps carry samples (samples_per_step).
  QString throughputUnit() const { return m_samples ? QStringLiteral("samples/s") : QStringLiteral("tokens/s"); }
  QCPAxisRect* stepRect() const { return m_stepRect; }
  QCPAxisRect* throughputRect() const { return m_throughputRect; }
  QCPLegend* throughputLegend() const { return m_throughputLegend; }
  bool showsThroughput() const { return m_throughputShown; }

 protected:
  void beforeReplot() override;
  void applyPalette() override;

 private:
  QCPGraph* rankGraph(int rank);
  void addStep(int rank, const protocol::Step& step);
  void fitPanels();

  struct Pending {
    int64_t tokens = 0;
    int64_t samples = 0;
    double max_ms = 0.0;
    int ranks = 0;
  };
  QCPAxisRect* m_stepRect = nullptr;
  QCPAxisRect* m_throughputRect = nullptr;
  std::map<int, QCPGraph*> m_rankGraphs;
  QCPLegend* m_throughputLegend = nullptr;
  QCPLayoutGrid* m_legends = nullptr;  // the legends' row: step time's, and throughput's while its panel shows
  QCPGraph* m_total = nullptr;
  QCPGraph* m_perGpu = nullptr;
  QCPItemRect* m_warmup = nullptr;
  std::map<int64_t, Pending> m_pending;  // steps not yet reported by every rank
  int m_worldSize = 1;
  int64_t m_warmupSteps = 0;
  QCPItemText* m_warmupLabel = nullptr;
  bool m_throughputShown = true;
  bool m_tokensUnknown = false;  // a step came without its tokens
  // The samples a rank's step carries by its config (hello's samples_per_step: a model without
  // tokens, a CNN); tokens come with the steps.
  std::map<int, int64_t> m_configSamples;
  bool m_samples = false;  // the throughput panel is in samples/s
  QLabel* m_throughputNote = nullptr;
  double m_maxStep = 0.0, m_maxMs = 0.0, m_maxTokens = 0.0;
  double m_maxMeasuredMs = 0.0, m_maxWarmupMs = 0.0;
};

}  // namespace tunebench::ui

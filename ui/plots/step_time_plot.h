// Step time per step and rank (top) and throughput (bottom): tokens/s of all ranks together and
// per GPU, computed for a step once every rank has reported it (the slowest rank sets the pace).
#pragma once

#include <map>

#include "ui/plots/live_plot.h"
#include "ui/runner/runner_types.h"

namespace tunebench::ui {

class StepTimePlot : public LivePlot {
  Q_OBJECT
 public:
  static constexpr double kMaxStepsWithMarkers = 200;

  explicit StepTimePlot(QWidget* parent = nullptr);

  void addEvents(const EventBatch& batch);
  void clear();

  int stepPoints(int rank) const;  // points in rank's step-time graph
  int throughputPoints() const;
  QCPAxisRect* stepRect() const { return m_stepRect; }
  QCPAxisRect* throughputRect() const { return m_throughputRect; }

 protected:
  void beforeReplot() override;

 private:
  QCPGraph* rankGraph(int rank);
  void addStep(int rank, const protocol::Step& step);

  struct Pending {
    int64_t tokens = 0;
    double max_ms = 0.0;
    int ranks = 0;
  };
  QCPAxisRect* m_stepRect = nullptr;
  QCPAxisRect* m_throughputRect = nullptr;
  std::map<int, QCPGraph*> m_rankGraphs;
  QCPGraph* m_total = nullptr;
  QCPGraph* m_perGpu = nullptr;
  QCPItemRect* m_warmup = nullptr;
  std::map<int64_t, Pending> m_pending;  // steps not yet reported by every rank
  int m_worldSize = 1;
  int64_t m_warmupSteps = 0;
  double m_maxStep = 0.0, m_maxMs = 0.0, m_maxTokens = 0.0;
};

}  // namespace tunebench::ui

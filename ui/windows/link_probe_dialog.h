// LinkProbeDialog: "Measure the link…". Says what will be measured (the form's
// ranks, device, NCCL variables, launcher), takes the range of message sizes, then shows the
// probe's progress and its points as they arrive (rank 0's all-reduce bus bandwidth per size),
// with Cancel, and its end: stored (and used by the Prediction dock), failed (the reason in
// words) or cancelled. It runs nothing itself: Measure and Cancel are signals
// (LinkProbeController starts the trial through the window's TrialLauncher). Not modal: the
// window can be watched meanwhile. Closing it while the probe waits or runs cancels it.
#pragma once

#include <QDialog>

#include "core/launch/launch_plan.h"
#include "core/protocol/events.h"

class QDoubleSpinBox;
class QLabel;
class QProgressBar;
class QPushButton;
class QTableWidget;

namespace tunebench::ui {

class LinkProbeDialog : public QDialog {
  Q_OBJECT
 public:
  enum class State { Ready, Waiting, Running, Stored, Failed, Cancelled };

  // `what`: the probe in words (HTML); `defaults`: the sizes offered; `problem`: why it cannot run
  // at all (one rank), shown instead of Measure.
  LinkProbeDialog(const QString& what, const launch::LinkProbeRange& defaults, const QString& problem,
                  QWidget* parent = nullptr);

  State state() const { return m_state; }
  launch::LinkProbeRange range() const;
  QString statusText() const;
  QDoubleSpinBox* minMb() const { return m_min; }
  QDoubleSpinBox* maxMb() const { return m_max; }
  QPushButton* measureButton() const { return m_measure; }
  QPushButton* cancelButton() const { return m_cancel; }
  QTableWidget* points() const { return m_points; }
  QProgressBar* progressBar() const { return m_progress; }

  // Waiting for the launch preview's answer or for a running trial to end.
  void setWaiting(const QString& text);
  void setRunning(int sizes);
  void setProgress(int done, int total, double elapsedS);
  void addPoint(const protocol::LinkProbe& point);
  void setStored(const QString& text);
  void setFailed(const QString& text);
  void setCancelled(const QString& text);

 signals:
  void measureRequested(const tunebench::launch::LinkProbeRange& range);
  void cancelRequested();

 protected:
  void reject() override;  // Escape and the close button: cancel what runs, then close

 private:
  void setState(State state, const QString& text);

  State m_state = State::Ready;
  QLabel* m_status = nullptr;
  QDoubleSpinBox* m_min = nullptr;
  QDoubleSpinBox* m_max = nullptr;
  QProgressBar* m_progress = nullptr;
  QTableWidget* m_points = nullptr;
  QPushButton* m_measure = nullptr;
  QPushButton* m_cancel = nullptr;
  bool m_canMeasure = true;
};

}  // namespace tunebench::ui

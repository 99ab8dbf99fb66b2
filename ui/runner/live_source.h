// Something that produces a trial's events live: a TrialRunner (real ranks) or a ReplaySource
// (a recorded .jsonl log). The window connects to this interface only, so a replay travels
// through exactly the same views as a run.
#pragma once

#include <QObject>

#include "ui/runner/runner_types.h"

namespace tunebench::ui {

class LiveSource : public QObject {
  Q_OBJECT
 public:
  using QObject::QObject;
  ~LiveSource() override = default;

  virtual bool isActive() const = 0;
  virtual void stop() = 0;

 signals:
  void started(const QString& trialId);
  void eventsArrived(const tunebench::ui::EventBatch& batch);
  void logLine(const tunebench::ui::LogLine& line);
  void progress(const tunebench::ui::TrialProgress& progress);
  void finished(const tunebench::ui::TrialOutcome& outcome);
};

}  // namespace tunebench::ui

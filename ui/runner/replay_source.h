// ReplaySource: plays a recorded .jsonl event log (all ranks interleaved) into the live views,
// so a GPU run recorded elsewhere can be watched, and tested, on a machine without a GPU.
//
// Events are ordered by their timestamp and released in batches on a timer so that recorded time
// passes `speed` times faster than wall time (speed <= 0: as fast as the views take them).
#pragma once

#include <QElapsedTimer>

#include "ui/runner/live_source.h"

class QTimer;

namespace tunebench::ui {

class ReplaySource : public LiveSource {
  Q_OBJECT
 public:
  static constexpr int kTickMs = 33;
  static constexpr size_t kMaxEventsPerTickUnpaced = 4000;

  explicit ReplaySource(QObject* parent = nullptr);
  ~ReplaySource() override;

  // Reads the whole log; false with errorString() when it cannot be read or holds no event.
  bool load(const QString& path);
  // Loads events directly (tests, benchmarks).
  void setEvents(EventBatch events, const QString& trialId);
  QString errorString() const { return m_error; }
  size_t eventCount() const { return m_events.size(); }
  int worldSize() const { return m_worldSize; }
  int plannedSteps() const { return m_steps; }
  QString trialId() const { return m_trialId; }

  void start(double speed);
  bool isActive() const override { return m_active; }
  void stop() override;

 private:
  void tick();
  void finish(protocol::TrialStatus status, const QString& reason);

  EventBatch m_events;
  size_t m_next = 0;
  QTimer* m_timer = nullptr;
  QElapsedTimer m_clock;
  double m_speed = 1.0;
  int m_worldSize = 1;
  int m_steps = 0;
  int m_lastStep = -1;
  QString m_trialId;
  QString m_error;
  bool m_active = false;
};

}  // namespace tunebench::ui

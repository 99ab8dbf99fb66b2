// Plain data that leaves the runner: what widgets, models and the CLI receive instead of bytes
// and processes (the hotspot PerfParser idea: typed signals, copyable structs).
#pragma once

#include <optional>
#include <vector>

#include <QMetaType>
#include <QString>

#include "core/config/trial_config.h"
#include "core/launch/launch_plan.h"
#include "core/protocol/events.h"
#include "core/protocol/trial_status.h"

namespace tunebench::ui {

// Events of all ranks, in arrival order, delivered together so views update once per batch.
using EventBatch = std::vector<protocol::Event>;

// What the user asked to run. The worker program is injectable so tests use a fake worker.
struct TrialRequest {
  QString id;
  config::TrialConfig config;
  QString worker_program;  // empty: find_worker_program()
  // Set: the ranks measure the link (tunebench-worker --probe-link) instead of training; the same
  // launch plan, progress counts the probe's message sizes.
  std::optional<launch::LinkProbeRange> link_probe;
};

struct LogLine {
  enum class Source { Stdout, Stderr, Event, Runner };
  int rank = -1;  // -1: the runner itself
  Source source = Source::Runner;
  QString text;
};

struct TrialProgress {
  QString trial_id;
  int step = 0;            // steps every rank has completed (a link probe: sizes measured)
  int steps = 0;           // steps planned (a link probe: sizes to measure)
  double elapsed_s = 0.0;  // since launch
  double eta_s = -1.0;     // -1 until two steps have been seen
  QString unit = QStringLiteral("step");  // what step counts: "step", or "size" for a link probe
};

// How a trial ended: launch::TrialEnd (core/launch/trial_supervisor.h, the words the CLI prints
// too) as QStrings. Status is Done, Failed or Stopped.
struct TrialOutcome {
  QString trial_id;
  protocol::TrialStatus status = protocol::TrialStatus::Done;
  int exit_code = 0;    // as tunebench-cli run exits: 0 done, 130 stopped, else the failure's code
  QString reason;       // plain words, empty on success
  QString stderr_tail;  // last lines of the failed rank's stderr
  int failed_rank = -1;
};

}  // namespace tunebench::ui

Q_DECLARE_METATYPE(tunebench::ui::EventBatch)
Q_DECLARE_METATYPE(tunebench::ui::LogLine)
Q_DECLARE_METATYPE(tunebench::ui::TrialProgress)
Q_DECLARE_METATYPE(tunebench::ui::TrialOutcome)

// TrialViewData: a stored trial made ready for the view off the GUI thread: its events in the
// order the live views consume them and its timeline already sorted, so showing it costs the GUI
// thread only handing over the data and one replot.
#pragma once

#include <QString>

#include "ui/plots/timeline_data.h"
#include "ui/runner/runner_types.h"

namespace tunebench::ui {

struct TrialViewData {
  QString recordId;
  QString title;          // "name — done, 2 ranks, 400 steps"
  EventBatch events;      // trial_log_events(): step time, throughput and telemetry
  TimelineData timeline;  // the same events as bars
};

}  // namespace tunebench::ui

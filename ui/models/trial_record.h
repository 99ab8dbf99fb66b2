// TrialRecord: one row of the trials table, as plain data. The live window fills it from a
// TrialRunner; the session store can fill it from SQLite the same way.
#pragma once

#include <cmath>

#include <QDateTime>
#include <QString>
#include <QStringList>

#include "core/config/trial_config.h"
#include "core/protocol/trial_status.h"

namespace tunebench::ui {

struct TrialRecord {
  QString id;
  config::TrialConfig config;
  protocol::TrialStatus status = protocol::TrialStatus::Queued;
  bool replay = false;  // played from a recorded log, not run here
  QDateTime started;
  int step = 0;                          // steps completed by every rank
  int steps = 0;                         // planned
  double step_ms_median = std::nan("");  // the trial's step time: analysis::trial_step_ms (slowest rank per step)
  double tokens_per_s = std::nan("");    // all ranks together
  double samples_per_s = std::nan("");   // a model without tokens (samples_per_step), when tokens/s is unknown
  QString reason;                        // why it failed or stopped, in plain words
  QString stderr_tail;                   // of the failed rank
  QString notes;                         // the user's notes (Annotate), shown in the table
  QStringList tags;                      // the user's tags, sorted
  QString source;                        // "live", "import: run.jsonl", "duplicate of trial 3"
  // Ranks the stored log holds, of a world of `ranks_world` (its hellos): fewer for a trace import
  // of some ranks. 0: not read (a queued or running trial), the config's world size stands.
  int ranks_stored = 0;
  int ranks_world = 0;
  // The strategy is a known setting of the trial (an imported trace may not show it: two ranks with
  // their own all-reduce are neither DDP nor FSDP nor single); the table then says "unknown".
  bool strategy_known = true;
};

// The ranks a trial holds, as the table and the trial view's title say them: "1 of 2" when a trace
// import kept only some ranks of its run, else the world size ("2").
QString ranks_held(int stored, int world);

QString to_display_string(protocol::TrialStatus status);

}  // namespace tunebench::ui

// A stored trial back as the event stream the live views consume: what lets a trial opened from
// a session file be shown by the same plots as a live run (no second drawing path to keep true).
//
// The order is the order a live run delivers: every rank's hello and model first, then steps,
// samples and messages by time, each rank's done last. Headers carry the trial id and times from
// the log (a step is stamped at its end, as the worker sends it). Pure function: tested without
// a window, run off the GUI thread.
//
// A step without tokens (a trial imported from torch.profiler traces: a trace does not know them)
// gets the tokens per rank step of the trial's config when its known settings hold micro_batch,
// seq_len and grad_accum (filled in at import or with Trial > Settings…), so the throughput plot
// shows what a run would.
#pragma once

#include "core/protocol/trial_log.h"
#include "ui/runner/runner_types.h"

namespace tunebench::ui {

EventBatch trial_log_events(const protocol::TrialLog& log);

}  // namespace tunebench::ui

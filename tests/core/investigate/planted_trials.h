// Synthetic stored trials with planted causes, for the investigation tests: a step model where
// each knob has a known effect, per-step and per-run noise from a seeded generator, and a
// TrialExecutor that "runs" a config by writing such a trial into the session (the store's own
// import transaction), with the request's tags. No worker, no timing of this machine.
#pragma once

#include <cstdint>
#include <random>
#include <string>

#include "core/config/trial_config.h"
#include "core/investigate/trial_executor.h"
#include "core/protocol/trial_log.h"

namespace tunebench::testing {

struct PlantedModel {
  double forward_ms_per_seq = 7.5;     // per sequence of the micro-batch
  double backward_ms_per_seq = 15.0;
  double optimizer_ms = 10.0;
  double data_wait_ms_no_workers = 0;  // per step when num_workers == 0 (the planted data cause)
  double exposed_comm_ms = 0;          // per optimizer step of a DDP trial without compression
  double compile_speedup = 1.0;        // forward/backward divided by this with compile fused
  double step_noise = 0.02;            // relative sd per step
  double run_noise = 0.005;            // relative sd per run
};

// One trial of `config` under `model` (measured steps: config.steps - config.warmup).
protocol::TrialLog planted_trial(const config::TrialConfig& config, const PlantedModel& model, std::mt19937_64& rng,
                                 const std::string& id);

// Stores planted trials in `session_path`; counts its calls in *calls when given.
investigate::TrialExecutor planted_executor(const std::string& session_path, PlantedModel model, uint64_t seed,
                                            int* calls = nullptr);

}  // namespace tunebench::testing

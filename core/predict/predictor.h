// The prediction of one configuration on some GPUs: memory per rank and whether it fits, the
// step per phase, throughput, the communication floor and "can N GPUs beat one here?".
//
// Everything measured that applies is used, and the prediction says what it used:
//   - compute efficiencies: calibrated from `evidence` trials on the same GPU (calibration.h),
//     else catalogue defaults;
//   - the link: a catalogue link named by the scenario; else a probe of this transport in the
//     evidence; else the collectives of evidence trials over this transport; else the catalogue
//     link the GPU and the NCCL variables imply;
//   - contention: calibrated for this transport, else the link's share of the GPU's SMs.
// The GUI form, the What-if panel, `tunebench-cli predict` and the accuracy tables all call this.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/config/trial_config.h"
#include "core/predict/calibration.h"
#include "core/predict/evidence.h"
#include "core/hardware/hardware.h"
#include "core/predict/link_model.h"
#include "core/predict/memory_model.h"
#include "core/predict/step_model.h"

namespace tunebench::predict {

struct Scenario {
  config::TrialConfig config;       // the knobs; world_size is the GPU count
  std::string gpu;                  // catalogue id or device name; empty: the CPU when config.device is cpu
  std::string link;                 // catalogue link id; empty: measured, else implied
  int hosts = 1;                    // hosts the ranks span (a per-node link when > 1)
  int64_t device_memory_bytes = 0;  // detected memory per device; 0: the catalogue's
  bool fused_adamw = true;          // the worker has the fused AdamW kernel (libtorch 2.x with CUDA)
};

// "Can N GPUs beat one here?": one GPU running one rank's share of the tokens, against the
// N-GPU step, with the bounds of core/analysis (data_parallel_bounds).
struct ScalingEstimate {
  int world_size = 1;
  double single_step_ms = 0;        // one GPU, strategy single, the same micro-batch
  double speedup = 0;               // predicted total throughput over one GPU's
  double speedup_no_overlap = 0;    // n C / (C + floor)
  double speedup_full_overlap = 0;  // n C / (C + max(0, floor - backward))
  bool can_beat_single = false;     // the predicted speed-up exceeds 1, and the config fits
  // false: the config does not fit the GPUs' memory, so no speed verdict is given (a run would end
  // out of memory); the speed-ups above are then "if it fit", and the statement says so.
  bool fits = true;
  int64_t accum_for_90pct = 1;      // grad_accum keeping 90 % per GPU with nothing overlapped
  std::string statement;            // in words
};

struct Prediction {
  Scenario scenario;
  const hardware::GpuSpec* gpu = nullptr;
  bool cuda = true;
  MemoryPrediction memory;
  int64_t device_memory_bytes = 0;  // what memory is compared against (0: unknown)
  int ranks_sharing_memory = 1;     // ranks whose needs add up in that memory: CPU ranks share their host's
  Fit fit = Fit::Fits;              // of the ranks together
  std::optional<StepEstimate> step;  // nullopt: unknown device or precision without a peak
  std::optional<ScalingEstimate> scaling;
  std::optional<LinkCurve> link;
  Efficiency efficiency;
  double contention = 0;
  std::string contention_source;
  std::vector<std::string> notes;  // provenance and caveats, for people
};

Prediction predict_scenario(const Scenario& scenario, const std::vector<const MeasuredTrial*>& evidence = {},
                            const hardware::Catalogue& cat = hardware::catalogue());

// The scenario of a measured trial: its config on its device and transport.
Scenario scenario_of(const MeasuredTrial& trial);

}  // namespace tunebench::predict

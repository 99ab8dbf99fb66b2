// Efficiency factors of a device, calibrated from trials measured on it.
//
// Each factor is solved so that the model's phase times, summed over the calibration trials,
// equal the measured ones (bisection; the model is monotonic in each factor):
//   1. memory efficiency from the optimizer phases (pure HBM-bound work);
//   2. matmul efficiency of forward from the forward phases, given 1;
//   3. matmul efficiency of backward from the backward phases (recompute at 2's efficiency);
//   4. contention per transport from multi-GPU trials, once 1-3 came from single-GPU trials:
//      (measured compute - modelled compute) / hidden collective time.
// Trials on other devices, CUDA-graph trials and failed trials calibrate nothing. The efficiencies
// absorb what the op list leaves out, which differs between eager and fused kernels: trials of the
// predicted config's kernel kind are preferred. Without single-GPU
// trials, multi-GPU trials calibrate 1-3 with the default contention taken out of their phases.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/predict/evidence.h"
#include "core/hardware/hardware.h"
#include "core/predict/step_model.h"

namespace tunebench::predict {

struct Calibration {
  Efficiency efficiency;
  std::map<std::string, double> contention;  // transport key -> ms of compute lost per ms hidden
  std::vector<std::string> used;             // labels of the trials that calibrated something
  std::vector<std::string> notes;            // what could not be calibrated and why
  bool calibrated() const { return !used.empty(); }
};

// `like`: the config being predicted. Trials that run its kernels (eager or fused, float8 or not)
// calibrate it when there are any; otherwise every trial on the GPU does.
Calibration calibrate(const std::vector<const MeasuredTrial*>& trials, const hardware::GpuSpec& gpu,
                      const hardware::Catalogue& cat = hardware::catalogue(),
                      const config::TrialConfig* like = nullptr);

}  // namespace tunebench::predict

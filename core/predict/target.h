// Where a configuration is predicted: which GPUs, how many, over which link. `tunebench-cli
// predict`'s flags (--gpu --gpus --link --hosts --memory-gib) and the GUI's Prediction dock and
// What-if dialog all fill a Target and turn it into the Scenario predict_scenario() takes here, so
// one configuration on one target is one prediction wherever it is shown.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/predict/predictor.h"

namespace tunebench::predict {

struct Target {
  std::string gpu;           // catalogue id or device name; empty: the evidence's GPU (CUDA configs)
  int gpus = 0;              // the GPU count (the world size); 0: the config's own
  std::string link;          // catalogue link id; empty: measured here, else what the GPU implies
  int hosts = 1;             // hosts the GPUs span
  int64_t memory_bytes = 0;  // memory per device; 0: the catalogue's (GPUs) or this host's (CPU ranks)
};

struct TargetedScenario {
  Scenario scenario;
  std::vector<std::string> notes;  // what was adjusted ("2 GPUs with strategy single: predicting ddp")
};

// The config on the target: the GPU count becomes the world size (strategy single <-> ddp as the
// count asks), a named GPU makes a CPU config a CUDA one, a CUDA config without a GPU takes the GPU
// the evidence was measured on (and its memory), CPU ranks are checked against this host's memory.
// Throws std::runtime_error with a sentence for an unknown GPU or link, or a CUDA config whose GPU
// nothing names.
TargetedScenario scenario_for(config::TrialConfig config, const Target& target,
                              const std::vector<const MeasuredTrial*>& evidence = {},
                              const hardware::Catalogue& cat = hardware::catalogue());

// This host's physical memory (what CPU ranks share), 0 when unknown.
int64_t host_memory_bytes();

}  // namespace tunebench::predict

// The hand-made trials shared by several analysis tests, with their expected numbers worked out
// in the comments of scenarios.cpp.
#pragma once

#include "tests/core/analysis/synthetic_trial.h"

namespace tunebench::testing {

// One GPU, 100 ms steps of 4,096 tokens: forward 30, backward 60, optimizer 10 (ms). 2 warm-up + 5 measured.
SyntheticTrial single_gpu_trial();
// DDP on 2 GPUs, 4,096 tokens per rank, 143 ms steps: data wait 5, forward 30, backward 60 with a
// 35 ms all-reduce bucket hidden under its end, then an exposed 38 ms bucket, optimizer 10.
// 13.5 GB of fp32 gradients (3.375e9 parameters) per step at a bus bandwidth of 310 GB/s.
SyntheticTrial ddp_trial();
// The forum's pair: one GPU 1.2 s per step, DDP on two 1.5 s per step, the same tokens per GPU.
SyntheticTrial forum_single_trial();
SyntheticTrial forum_ddp_trial();

}  // namespace tunebench::testing

#include "tests/core/analysis/scenarios.h"

namespace tunebench::testing {

using protocol::Phase;

namespace {

config::TrialConfig gpu_config(const char* name, config::Strategy strategy, int world) {
  config::TrialConfig c;
  c.name = name;
  c.device = config::Device::Cuda;
  c.strategy = strategy;
  c.world_size = world;
  c.micro_batch = 4;
  c.seq_len = 1024;
  c.amp = config::Amp::Bf16;
  c.steps = 7;
  c.warmup = 2;
  return c;
}

}  // namespace

SyntheticTrial single_gpu_trial() {
  SyntheticTrial t("single-1", gpu_config("single", config::Strategy::Single, 1));
  t.set_parameters(3'375'000'000);
  t.set_memory(60'000'000'000, 0);
  t.add_steps(
      2, 5, 100'000,
      {iv(Phase::Forward, 0, 30'000), iv(Phase::Backward, 30'000, 90'000), iv(Phase::Optimizer, 90'000, 100'000)},
      4096);
  return t;
}

SyntheticTrial ddp_trial() {
  SyntheticTrial t("ddp-1", gpu_config("ddp x2", config::Strategy::Ddp, 2));
  t.set_parameters(3'375'000'000);
  t.set_memory(70'000'000'000, 0);
  // Exposed all-reduce: [95, 133] ms = 38 ms; hidden: [60, 95] ms = 35 ms under backward.
  t.add_steps(2, 5, 143'000,
              {iv(Phase::DataWait, 0, 5'000), iv(Phase::Forward, 5'000, 35'000), iv(Phase::Backward, 35'000, 95'000),
               iv(Phase::AllReduce, 60'000, 95'000, 6'000'000'000, 310.0),
               iv(Phase::AllReduce, 95'000, 133'000, 7'500'000'000, 310.0), iv(Phase::Optimizer, 133'000, 143'000)},
              4096);
  return t;
}

SyntheticTrial forum_single_trial() {
  auto c = gpu_config("4090 single", config::Strategy::Single, 1);
  SyntheticTrial t("forum-single", c, "NVIDIA GeForce RTX 4090", 25'757'220'864);
  t.set_parameters(1'100'000'000);
  t.set_memory(20'000'000'000, 0);
  t.add_steps(2, 5, 1'200'000,
              {iv(Phase::Forward, 0, 400'000), iv(Phase::Backward, 400'000, 1'100'000),
               iv(Phase::Optimizer, 1'100'000, 1'200'000)},
              4096);
  return t;
}

SyntheticTrial forum_ddp_trial() {
  auto c = gpu_config("4090 ddp x2", config::Strategy::Ddp, 2);
  SyntheticTrial t("forum-ddp", c, "NVIDIA GeForce RTX 4090", 25'757'220'864);
  t.set_parameters(1'100'000'000);
  t.set_memory(22'000'000'000, 0);
  // 4.4 GB of fp32 gradients in two 2.2 GB buckets through host memory at 11 GB/s: 200 ms each,
  // the first hidden under backward, the second exposed; 100 ms of data wait on top: +300 ms.
  t.add_steps(
      2, 5, 1'500'000,
      {iv(Phase::DataWait, 0, 100'000), iv(Phase::Forward, 100'000, 500'000), iv(Phase::Backward, 500'000, 1'200'000),
       iv(Phase::AllReduce, 1'000'000, 1'200'000, 2'200'000'000, 11.0),
       iv(Phase::AllReduce, 1'200'000, 1'400'000, 2'200'000'000, 11.0), iv(Phase::Optimizer, 1'400'000, 1'500'000)},
      4096);
  return t;
}

}  // namespace tunebench::testing

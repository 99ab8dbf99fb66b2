// Step time of one rank, per phase, on a device: the step's work (step_work.h) against the
// device's peak FLOP/s and HBM bandwidth with efficiency factors, the data knobs, and the
// collectives over a link with the overlap model of core/metrics (data_parallel_bounds.h).
//
// An op takes max(FLOPs / (peak x efficiency), bytes / (HBM x memory efficiency)); a GEMM's
// efficiency is the calibrated one of a large GEMM times its shape's factor (gemm_shape.h), the
// attention's the calibrated attention ratio times its kernel's speed at its head size
// (attention.h). A phase
// takes the sum of its ops, or the host's launch time when that is longer (eager kernels are
// launched one by one; a CUDA graph replays them without the host). Collectives that run while
// compute runs are hidden up to that compute, and slow it by `contention` ms per ms of hidden
// collective (NCCL's kernels occupy SMs and HBM bandwidth meanwhile).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/config/trial_config.h"
#include "core/predict/activations.h"
#include "core/hardware/hardware.h"
#include "core/predict/link_model.h"
#include "core/predict/step_work.h"

namespace tunebench::predict {

// How close to the peaks the kernels run. Defaults are catalogue constants; calibration.h
// replaces them with figures measured on the device.
struct Efficiency {
  double matmul_forward = 0.81;  // of a large GEMM (gemm_shape.h scales it per shape)
  double matmul_backward = 0.81;
  double attention_ratio = 0.57;  // attention efficiency / matmul efficiency
  double memory = 0.75;           // of the HBM bandwidth
  double launch_us = 25.0;        // host time per eager kernel launch
  std::string source = "catalogue defaults";
  // The catalogue of the per-shape constants (GEMM tiles, attention speeds); null: the built-in
  // one. Set by default_efficiency, so `predict --catalogue FILE` prices every op from FILE.
  const hardware::Catalogue* catalogue = nullptr;
};
Efficiency default_efficiency(const hardware::Catalogue& cat = hardware::catalogue());

struct DeviceRates {
  double matmul_tflops = 0;  // dense peak of the matmul dtype
  double fp8_tflops = 0;     // dense fp8 peak (amp fp8's block matmuls); 0: none
  double hbm_gbps = 0;
  int sms = 0;  // streaming multiprocessors (the GEMMs' waves of tiles)
};
// The rates of `gpu` for a config's precision; nullopt when the catalogue has no peak for its
// matmul dtype (e.g. bf16 on a V100).
std::optional<DeviceRates> device_rates(const hardware::GpuSpec& gpu, const config::TrialConfig& config);

// Milliseconds of a phase's work. `matmul_efficiency` applies to matmuls, x attention_ratio to attention.
double phase_ms(const PhaseWork& work, const DeviceRates& rates, double matmul_efficiency, const Efficiency& eff,
                bool cuda_graph);

struct StepEstimate {
  // Per optimizer step, milliseconds, on the critical rank.
  double data_wait_ms = 0;
  double h2d_ms = 0;
  double forward_ms = 0;    // all micro-steps
  double backward_ms = 0;   // all micro-steps, recompute included
  double recompute_ms = 0;  // inside backward_ms
  double optimizer_ms = 0;
  double contention_ms = 0;    // compute slowed by overlapping collectives (inside forward/backward)
  double comm_floor_ms = 0;    // every collective of the step, nothing overlapped
  double exposed_comm_ms = 0;  // what the overlap model leaves exposed
  double step_ms = 0;
  double tokens_per_step = 0;  // all ranks
  double tokens_per_s_total = 0;
  double tokens_per_s_per_gpu = 0;
  std::optional<double> mfu;      // against the dense bf16 peak (the analysis convention)
  double first_bucket_bytes = 0;  // DDP: the smallest all-reduce message, for the notes
};

struct StepInputs {
  const config::TrialConfig* config = nullptr;
  const hardware::GpuSpec* gpu = nullptr;
  const LinkCurve* link = nullptr;  // needed when world_size > 1
  Efficiency efficiency;
  double contention = 0;  // ms of compute lost per ms of hidden collective
  bool cuda = true;
};
std::optional<StepEstimate> estimate_step(const StepInputs& in);

// The default contention of a link on a GPU: the share of SMs its collectives occupy.
double default_contention(const LinkCurve& link, const hardware::GpuSpec& gpu);

// The DDP bucket layout of the engine (strategy/ddp.cpp): reverse parameter order, a first bucket
// of first_bucket_mb, then bucket_mb; a parameter larger than the cap gets a bucket of its own.
// Element counts per bucket, in launch order.
std::vector<double> ddp_bucket_numels(const config::TrialConfig& config, int param_bytes);

}  // namespace tunebench::predict

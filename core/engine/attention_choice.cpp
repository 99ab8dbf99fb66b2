#include "core/engine/attention_choice.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <optional>
#include <vector>

#include <ATen/ATen.h>
#include <torch/csrc/autograd/autograd.h>

#include "core/engine/compat.h"
#include "core/engine/errors.h"
#include "core/rules/attention.h"

namespace tunebench::engine {

namespace {

using rules::AttentionChoice;
using rules::AttentionKernel;

compat::SdpaKernel sdpa_kernel(AttentionKernel k) {
  switch (k) {
    case AttentionKernel::Flash:
      return compat::SdpaKernel::Flash;
    case AttentionKernel::Cudnn:
      return compat::SdpaKernel::Cudnn;
    case AttentionKernel::Efficient:
      return compat::SdpaKernel::Efficient;
    default:
      return compat::SdpaKernel::Math;
  }
}

// q, k, v in the layout the model hands SDPA ([B, T, heads, hd] memory, seen as [B, heads, T, hd];
// padded heads are fresh tensors on both paths, an unpadded v of the composite path a slice of the
// q/k/v projection), with the leaves they view. `values`: random contents (timing); otherwise
// uninitialised, for SDPA's choice, which reads only the metadata.
struct SdpaInputs {
  at::Tensor q, k, v;
  std::vector<at::Tensor> leaves;
  double scale = 0.0;  // the real head size's when padded; 0: SDPA's own
};

SdpaInputs sdpa_inputs(const config::TrialConfig& c, const DeviceContext& device, at::ScalarType compute,
                       const AttentionChoice& want, int64_t batch, bool values) {
  const bool fused = config::uses_fused_kernels(c.compile);
  const int64_t B = batch, T = c.seq_len, H = c.dims.heads, KV = c.dims.kv_head_count(), hd = want.padded_head_dim;
  const auto opts = at::TensorOptions().device(device.device()).dtype(compute);
  SdpaInputs in;
  // Factory ops refuse requires_grad in their options: the leaves are marked after creation.
  const auto leaf = [&](at::IntArrayRef sizes) {
    in.leaves.push_back((values ? at::randn(sizes, opts) : at::empty(sizes, opts)).requires_grad_(true));
    return in.leaves.back();
  };
  in.q = leaf({B, T, H, hd}).transpose(1, 2);
  in.k = leaf({B, T, KV, hd}).transpose(1, 2);
  in.v = fused || hd != want.head_dim
             ? leaf({B, T, KV, hd}).transpose(1, 2)
             : leaf({B, T, (H + 2 * KV) * hd}).narrow(-1, (H + KV) * hd, KV * hd).view({B, T, KV, hd}).transpose(1, 2);
  if (hd != want.head_dim) in.scale = 1.0 / std::sqrt(static_cast<double>(want.head_dim));
  return in;
}

// Allows only `want` (PyTorch's SDPA switches) and says whether SDPA runs it on the trial's shapes:
// "" when it does, else why not.
std::string why_not_runs(const config::TrialConfig& c, const DeviceContext& device, at::ScalarType compute,
                         const AttentionChoice& want) {
  const SdpaInputs in = sdpa_inputs(c, device, compute, want, c.micro_batch, false);
  compat::select_attention(sdpa_kernel(want.kernel));
  std::string ran, error;
  try {
    ran = compat::attention_in_use(in.q, in.k, in.v, in.scale > 0 ? std::optional<double>(in.scale) : std::nullopt);
  } catch (const c10::Error& e) {
    ran = "none";
    error = e.what_without_backtrace();
  }
  if (ran == rules::to_string(want.kernel)) return "";
  return std::string(rules::to_string(want.kernel)) + " attention cannot run head size " +
         std::to_string(want.head_dim) + " with " + std::to_string(c.dims.heads) + " query / " +
         std::to_string(c.dims.kv_head_count()) + " key-value heads here" +
         (error.empty() ? "" : " (" + error.substr(0, 300) + ")");
}

// Forward + backward TFLOP/s (rules::attention_fwd_bwd_flops) of the kernel SDPA's switches allow
// (why_not_runs set them),
// at batch 1 and the trial's other sizes: one call to warm up (kernel set-up, workspaces), one to
// size the rounds at about 20 ms, then the median of three rounds, each ended by a device
// synchronisation. 0 when it throws.
double time_attention(const config::TrialConfig& c, const DeviceContext& device, at::ScalarType compute,
                      const AttentionChoice& want) {
  try {
    c10::AutoGradMode grad(true);
    const SdpaInputs in = sdpa_inputs(c, device, compute, want, 1, true);
    const at::Tensor out_grad = at::randn(in.q.sizes(), in.q.options().requires_grad(false));
    const auto call = [&] {
      const at::Tensor o = compat::causal_attention(in.q, in.k, in.v, in.scale);
      (void)torch::autograd::grad({o}, in.leaves, {out_grad});
    };
    using clock = std::chrono::steady_clock;
    const auto ms_since = [](clock::time_point t0) {
      return std::chrono::duration<double, std::milli>(clock::now() - t0).count();
    };
    call();
    device.synchronize();
    auto t0 = clock::now();
    call();
    device.synchronize();
    const int calls = static_cast<int>(std::clamp(20.0 / std::max(ms_since(t0), 1e-3), 1.0, 20.0));
    std::vector<double> round_ms;
    for (int round = 0; round < 3; ++round) {
      t0 = clock::now();
      for (int i = 0; i < calls; ++i) call();
      device.synchronize();
      round_ms.push_back(ms_since(t0) / calls);
    }
    std::sort(round_ms.begin(), round_ms.end());
    const double flops = rules::attention_fwd_bwd_flops(1, c.dims.heads, c.seq_len, want.head_dim);
    return round_ms[1] > 0 ? flops / (round_ms[1] * 1e9) : 0.0;
  } catch (const c10::Error&) {
    return 0.0;
  }
}

std::string tflops_text(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.0f", v);
  return b;
}

}  // namespace

AttentionPick choose_attention(const config::TrialConfig& c, const DeviceContext& device, at::ScalarType compute,
                               const std::function<void(protocol::Payload)>& sink) {
  std::vector<AttentionChoice> candidates = rules::attention_candidates(c, device.is_cuda());
  if (!device.is_cuda()) return {candidates.front().padded_head_dim, rules::to_string(candidates.front().kernel)};
  std::string refused;  // the kernels that cannot run here, and why
  if (candidates.size() > 1) {
    // auto: the candidates by their speed on this GPU.
    std::vector<double> tflops;
    std::string timed;
    for (const auto& want : candidates) {
      const std::string cannot = why_not_runs(c, device, compute, want);
      tflops.push_back(cannot.empty() ? time_attention(c, device, compute, want) : 0.0);
      if (!cannot.empty()) refused += (refused.empty() ? "" : "; ") + cannot;
      timed += std::string(timed.empty() ? "" : ", ") + rules::to_string(want.kernel) + " " +
               (cannot.empty() ? tflops_text(tflops.back()) : "-");
    }
    candidates = rules::rank_candidates(c, candidates, tflops, "timed here");
    sink(protocol::Log{"info", "attention kernels timed on this GPU (TFLOP/s, forward + backward, head size " +
                                   std::to_string(c.dims.head_dim()) + "): " + timed});
  }
  for (const auto& want : candidates) {
    const std::string cannot = why_not_runs(c, device, compute, want);  // selects it too
    if (cannot.empty()) {
      sink(protocol::Log{"info", "attention kernel: " + std::string(rules::to_string(want.kernel)) + " (" + want.why +
                                     ")" + (refused.empty() ? "" : "; could not run: " + refused)});
      return {want.padded_head_dim, std::string(rules::to_string(want.kernel)) + " (" + want.why + ")"};
    }
    if (c.attention != config::Attention::Auto)
      throw EngineError("config", protocol::kExitConfig, "attention: " + cannot);
    refused += (refused.empty() ? "" : "; ") + cannot;
  }
  // auto, and none of the candidates runs here: PyTorch's own order over every kernel, on the
  // unpadded head size (SDPA pads what its kernels need).
  const int64_t hd = c.dims.head_dim();
  const auto opts = at::TensorOptions().device(device.device()).dtype(compute);
  const int64_t B = c.micro_batch, T = c.seq_len, H = c.dims.heads, KV = c.dims.kv_head_count();
  const auto leaf = [&](at::IntArrayRef sizes) { return at::empty(sizes, opts).requires_grad_(true); };
  const at::Tensor q = leaf({B, T, H, hd}).transpose(1, 2);
  const at::Tensor k = leaf({B, T, KV, hd}).transpose(1, 2);
  const at::Tensor v = leaf({B, T, KV, hd}).transpose(1, 2);
  compat::allow_every_attention_kernel();
  const std::string ran = compat::attention_in_use(q, k, v);
  sink(protocol::Warning{"attention", refused + "; PyTorch's choice runs: " + ran});
  sink(protocol::Log{"info", "attention kernel: " + ran + " (PyTorch's choice)"});
  return {hd, ran + " (PyTorch's choice)"};
}

}  // namespace tunebench::engine

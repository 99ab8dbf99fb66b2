// One linear layer's float8 matmuls (amp fp8), with delayed per-tensor scaling as in Transformer
// Engine: activations and weights in e4m3, output gradients in e5m2, each tensor's scale taken
// from its amax of the previous step. The cast kernels record the new amax while they cast, so
// scaling costs no extra pass over the data and no host synchronisation; the very first use of
// each tensor measures its amax once first.
//
// The three GEMMs (y = x w^T, dx = dy w, dw = dy^T x) run through at::_scaled_mm, which wants its
// first operand row-major and its second column-major; the casts therefore also write the
// transposed copies backward needs (x^T, w^T, dy^T), in one pass each. Only x^T and w^T (1 byte
// per element) are kept for backward, not the bf16 activations.
//
// Needs a CUDA build with libtorch >= 2.1 and a Hopper GPU; elsewhere forward() throws.
#pragma once

#include <string>

#include <ATen/ATen.h>

namespace tunebench::engine {

class Fp8Linear {
 public:
  Fp8Linear();
  // y = x @ w^T in bf16, differentiable in x and w (w may be fp32 master weights or bf16).
  at::Tensor forward(const at::Tensor& x, const at::Tensor& w);
  // Once per optimizer step: the amax seen this step becomes next step's scaling history.
  void end_step();

  // Device state, slots x, w, dy, 16 bytes apart (public for the autograd Function and tests).
  at::Tensor amax_history, amax_current, inv_scale;
  bool measured_forward = false, measured_backward = false;  // first-use amax taken
};

// True when this build can run fp8 on the current CUDA device (message says why not otherwise).
bool fp8_supported(std::string* why);

}  // namespace tunebench::engine

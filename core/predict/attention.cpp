#include "core/predict/attention.h"

#include <algorithm>

namespace tunebench::predict {

namespace {

using config::Amp;
using config::Attention;

// Largest head size cuDNN 9.19's fused attention runs backward for on Hopper.
constexpr int64_t kCudnnMaxHeadDim = 128;

bool sixteen_bit(const config::TrialConfig& c) {
  if (c.strategy == config::Strategy::Fsdp && c.fsdp_param_dtype != config::DType::Fp32) return true;
  return c.amp == Amp::Bf16 || c.amp == Amp::Fp16 || c.amp == Amp::PureBf16 || c.amp == Amp::Fp8;
}

int64_t round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

}  // namespace

AttentionChoice attention_choice(const config::TrialConfig& c, bool cuda) {
  AttentionChoice a;
  a.head_dim = c.dims.head_dim();
  a.padded_head_dim = a.head_dim;
  const std::string dtype = sixteen_bit(c) ? (c.amp == Amp::Fp16 ? "fp16" : "bf16") : "fp32";
  const std::string size = " head size " + std::to_string(a.head_dim);
  if (!cuda) {
    a.kernel = AttentionKernel::Math;
    a.why = "the CPU runs the composite math";
    return a;
  }
  switch (c.attention) {
    case Attention::Flash:
      a.kernel = AttentionKernel::Flash;
      break;
    case Attention::Cudnn:
      a.kernel = AttentionKernel::Cudnn;
      break;
    case Attention::Efficient:
      a.kernel = AttentionKernel::Efficient;
      break;
    case Attention::Math:
      a.kernel = AttentionKernel::Math;
      break;
    case Attention::Auto:
      if (!sixteen_bit(c))
        a.kernel = AttentionKernel::Efficient;
      else if (a.head_dim % 8 == 0 && a.head_dim <= kCudnnMaxHeadDim)
        a.kernel = AttentionKernel::Cudnn;
      else
        a.kernel = AttentionKernel::Flash;
      break;
  }
  if (a.kernel == AttentionKernel::Flash) a.padded_head_dim = round_up(a.head_dim, 8);
  a.why = c.attention == Attention::Auto ? std::string("auto: ") + to_string(a.kernel) + " for " + dtype + size
                                         : std::string("attention=") + to_string(a.kernel) + " (" + dtype + size + ")";
  if (a.padded_head_dim != a.head_dim) a.why += ", padded to " + std::to_string(a.padded_head_dim);
  return a;
}

double attention_head_speed(AttentionKernel kernel, int64_t head_dim, const hardware::Catalogue& cat) {
  if (head_dim <= 0) return 1.0;
  const double s = cat.constant("attention_softmax_flops");
  // Per score: 4 x head columns of QK^T and PV, computed on whole tiles, and the softmax's work.
  const auto per_useful_flop = [&](int64_t hd) {
    const int64_t tile = kernel == AttentionKernel::Math ? 1 : (hd <= 128 ? 32 : 64);
    const double computed =
        4.0 * static_cast<double>(round_up(round_up(hd, kernel == AttentionKernel::Flash ? 8 : 1), tile));
    return (computed + s) / (4.0 * static_cast<double>(hd));
  };
  return per_useful_flop(128) / per_useful_flop(head_dim);
}

double attention_kernel_relative(AttentionKernel kernel, const hardware::Catalogue& cat) {
  switch (kernel) {
    case AttentionKernel::Cudnn:
      return 1.0;
    case AttentionKernel::Flash:
      return cat.constant("attention_flash_relative");
    case AttentionKernel::Efficient:
      return cat.constant("attention_efficient_relative");
    case AttentionKernel::Math:
      return cat.constant("attention_math_relative");
  }
  return 1.0;
}

const char* to_string(AttentionKernel kernel) {
  switch (kernel) {
    case AttentionKernel::Math:
      return "math";
    case AttentionKernel::Flash:
      return "flash";
    case AttentionKernel::Cudnn:
      return "cudnn";
    case AttentionKernel::Efficient:
      return "efficient";
  }
  return "?";
}

}  // namespace tunebench::predict

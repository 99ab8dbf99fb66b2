#include "core/predict/precision.h"

namespace tunebench::predict {

using config::Amp;

int dtype_bytes(config::DType d) { return d == config::DType::Fp32 ? 4 : 2; }

Precision precision_of(const config::TrialConfig& c) {
  Precision p;
  const bool half_amp = c.amp == Amp::Bf16 || c.amp == Amp::Fp16 || c.amp == Amp::Fp8;
  const bool fsdp = c.strategy == config::Strategy::Fsdp;
  const bool fsdp_half = fsdp && c.fsdp_param_dtype != config::DType::Fp32;
  p.fused = config::uses_fused_kernels(c.compile);
  p.fp8 = c.amp == Amp::Fp8;
  p.param_bytes = c.amp == Amp::PureBf16 ? 2 : 4;
  // FSDP with 16-bit gathered parameters computes in that dtype directly (no autocast), as the
  // engine does; the fused ops set their dtypes themselves; otherwise bf16/fp16 autocast casts the
  // fp32 weights on every forward.
  p.autocast = half_amp && !fsdp_half && !p.fused;
  if (fsdp_half) {
    p.compute_bytes = 2;
    p.residual_bytes = 2;  // the embedding of a 16-bit table is 16-bit, and so is everything after it
    p.matmul_dtype = c.fsdp_param_dtype == config::DType::Fp16 ? "fp16" : "bf16";
  } else if (half_amp) {
    p.compute_bytes = 2;
    p.residual_bytes = 4;  // fp32 embedding; the residual stream keeps its dtype
    p.matmul_dtype = c.amp == Amp::Fp16 ? "fp16" : "bf16";
  } else if (c.amp == Amp::PureBf16) {
    p.compute_bytes = 2;
    p.residual_bytes = 2;
    p.matmul_dtype = "bf16";
  } else {
    p.compute_bytes = 4;
    p.residual_bytes = 4;
    p.matmul_dtype = c.amp == Amp::Tf32 ? "tf32" : "fp32";
  }
  p.block_matmul_dtype = p.fp8 ? "fp8" : p.matmul_dtype;
  p.gathered_bytes = fsdp ? dtype_bytes(c.fsdp_param_dtype) : p.param_bytes;
  const int weight_bytes = fsdp ? p.gathered_bytes : p.param_bytes;
  p.weight_copy_bytes = (p.autocast || p.fused) && weight_bytes != p.compute_bytes ? p.compute_bytes : 0;
  p.reduce_bytes = fsdp ? dtype_bytes(c.fsdp_reduce_dtype) : p.param_bytes;
  p.wire_bytes = c.compression == config::Compression::None ? p.param_bytes : 2;
  return p;
}

}  // namespace tunebench::predict

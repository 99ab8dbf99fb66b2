// The GPU kernel check's harness (kernel_check.cpp) and its float8 rows (kernel_check_fp8.cpp).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <ATen/ATen.h>

namespace tunebench::kernel_check {

extern bool g_failed;  // a row missed its tolerance: the check exits 1

at::TensorOptions cuda(at::ScalarType t);
// Fills the caching allocator's free blocks with NaN (an unwritten output then reads NaN).
void poison();
// The largest difference between two tensors' bytes (0: bit-identical).
double byte_diff(const at::Tensor& a, const at::Tensor& b);
// Relative L2 error against a reference (infinite when `out` is not finite).
double rel_l2(const at::Tensor& out, const at::Tensor& ref);
// One table row; a kernel error above `tol` fails the check.
void row(const std::string& op, const std::string& tensor, double kernel_err, double composite_err, double tol);
// Median milliseconds of fn() over `reps` runs after 3 warm-ups.
double time_ms(const std::function<void()>& fn, int reps = 20);
// randn of `sizes` on the GPU times `scale`, in `t`.
at::Tensor randn(at::IntArrayRef sizes, at::ScalarType t, double scale = 1.0);

struct Timing {
  std::string op;
  double kernel_ms, composite_ms;
};
extern std::vector<Timing> g_timings;  // printed at the end, after every row

// The float8 rows (kernel_check_fp8.cpp). check_fp8_linear says itself when the GPU has no float8
// matmuls; main runs the others only where it has.
void check_fp8_linear(int64_t T, int64_t D, int64_t F);
void check_gemm_search_fp8();
void check_adamw_fp8();
void check_rms_norm_fp8();
void check_fp8_swiglu_mlp();
void check_fp8_qkv_rope();

}  // namespace tunebench::kernel_check

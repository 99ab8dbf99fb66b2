// See gemm_search.h. cuBLASLt is column-major: a row-major C [M, N] = a [M, K] b [K, N] is the
// column-major C^T (N x M) = b^T a^T, so cuBLAS's first operand comes from b and its second from a.
#include "core/engine/kernels/gemm_search.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>

#include "core/engine/compat.h"

// 2.10: at::mm writes fp32 from 16-bit operands straight from the GEMM (the reference a weight
// gradient's candidates must equal), and torch's Lt workspace is public.
#if defined(TUNEBENCH_WITH_CUDA) && defined(TUNEBENCH_HAVE_CUBLASLT) && TUNEBENCH_TORCH_AT_LEAST(2, 10)
#define TUNEBENCH_GEMM_SEARCH 1
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/Sleep.h>
#include <c10/core/GradMode.h>
#include <c10/cuda/CUDAGuard.h>
#include <cublasLt.h>
#endif

namespace tunebench::engine::gemm {

namespace {

// at::mm with the output dtype: what every call runs where the search does not apply, and the
// reference every candidate must equal.
at::Tensor plain_mm(const at::Tensor& a, const at::Tensor& b, at::ScalarType out) {
  if (out == a.scalar_type()) return at::mm(a, b);
#if TUNEBENCH_TORCH_AT_LEAST(2, 10)
  if (a.is_cuda() && out == at::kFloat && a.scalar_type() != at::kFloat) return at::mm(a, b, out);
#endif
  return at::mm(a, b).to(out);
}

#ifdef TUNEBENCH_GEMM_SEARCH
// at::_scaled_mm as the float8 linears call it (per-tensor scales, no bias): the reference a
// float8 shape's candidates must equal.
at::Tensor plain_scaled_mm(const at::Tensor& a, const at::Tensor& b, const at::Tensor& scale_a,
                           const at::Tensor& scale_b, at::ScalarType out, bool fast_accum) {
  return at::_scaled_mm(a, b, scale_a, scale_b, std::nullopt, std::nullopt, out, fast_accum);
}
#endif

// use_switches: TUNEBENCH_GEMM=cublas, TUNEBENCH_GEMM_LOG.
std::atomic<bool> g_search_on{true};
std::atomic<bool> g_log_shapes{false};

const char* disabled_by_switch() {
  return g_search_on.load(std::memory_order_relaxed) ? nullptr : "TUNEBENCH_GEMM=cublas";
}

#ifdef TUNEBENCH_GEMM_SEARCH

bool log_each_shape() {  // TUNEBENCH_GEMM_LOG: each shape's times on stderr
  return g_log_shapes.load(std::memory_order_relaxed);
}

void check_blas(cublasStatus_t s, const char* what) {
  TORCH_CHECK(s == CUBLAS_STATUS_SUCCESS, "compile fused: ", what, " failed (cuBLAS status ", static_cast<int>(s), ")");
}

std::optional<cudaDataType_t> blas_type(at::ScalarType t) {
  switch (t) {
    case at::kBFloat16:
      return CUDA_R_16BF;
    case at::kHalf:
      return CUDA_R_16F;
    case at::kFloat:
      return CUDA_R_32F;
    case at::kFloat8_e4m3fn:
      return CUDA_R_8F_E4M3;
    case at::kFloat8_e5m2:
      return CUDA_R_8F_E5M2;
    default:
      return std::nullopt;
  }
}

using detail::ColumnMajor;
cublasOperation_t blas_op(const ColumnMajor& m) { return m.transpose ? CUBLAS_OP_T : CUBLAS_OP_N; }

uint32_t pointer_alignment(const void* p) {
  const auto a = reinterpret_cast<uintptr_t>(p);
  return static_cast<uint32_t>(std::min<uintptr_t>(a & (~a + 1), 256));
}

// A GEMM as the search knows it: what selects its plan, and what rebuilds its operands.
struct Shape {
  int device;
  int64_t M, N, K;
  ColumnMajor fa, fb;  // a's and b's layouts (their rows and cols follow from M, N and K)
  at::ScalarType in, in_b, out;  // a's, b's and the result's dtypes
  uint32_t align_a, align_b;     // the operands' pointer alignment, up to 256 bytes
  bool scaled = false;           // float8 with per-tensor scales (at::_scaled_mm's product)
  bool fast_accum = false;       // float8: cuBLASLt's fast accumulation

  auto key() const {
    return std::make_tuple(device, M, N, K, fa.transpose, fa.ld, fb.transpose, fb.ld, in, in_b, out, align_a, align_b,
                           scaled, fast_accum);
  }
  bool operator==(const Shape& o) const { return key() == o.key(); }
};
struct ShapeHash {
  size_t operator()(const Shape& s) const {
    size_t h = 0;
    std::apply([&](const auto&... v) { ((h = h * 1000003u ^ std::hash<std::decay_t<decltype(v)>>{}(v)), ...); },
               s.key());
    return h;
  }
};

// A shape's descriptors and the algorithm chosen for it (none: at::mm's call was the fastest).
struct GemmPlan {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t first = nullptr, second = nullptr, out = nullptr;
  std::optional<cublasLtMatmulAlgo_t> algo;
  size_t workspace = 0;
};

struct SearchState {
  std::mutex mutex;
  // Plans live for the process: their descriptors are reused by every later call of the shape and
  // not destroyed at exit (the CUDA context may be gone by then).
  std::unordered_map<Shape, GemmPlan*, ShapeHash> plans;
  std::vector<Shape> pending;  // met since the last search_pending()
  Summary summary;
};
SearchState& search_state() {
  static SearchState* s = new SearchState();
  return *s;
}

// The GPU time of one call of each of `calls` (us), as a step runs them: back to back, the GPU at
// the clock its power limit allows under a stream of GEMMs rather than the boost clock of an idle
// one (an H200 at 7B drops to ~1.5 GHz at 700 W). Rounds of 10 calls of each in turn, starting one
// further along each round; the first round warms the GPU up; the median of 5 measured rounds.
std::vector<float> time_under_load(const std::vector<std::function<void()>>& calls, cudaStream_t stream) {
  constexpr int kRounds = 5, kReps = 10;
  const size_t n = calls.size();
  std::vector<cudaEvent_t> marks(n + 1);
  for (auto& e : marks) C10_CUDA_CHECK(cudaEventCreate(&e));
  std::vector<std::vector<float>> samples(n);
  for (int r = -1; r < kRounds; ++r) {
    at::cuda::sleep(400000);  // room for the host to queue ahead of the first calls
    const size_t first = static_cast<size_t>(r + 1) % n;
    C10_CUDA_CHECK(cudaEventRecord(marks[0], stream));
    for (size_t j = 0; j < n; ++j) {
      for (int k = 0; k < kReps; ++k) calls[(first + j) % n]();
      C10_CUDA_CHECK(cudaEventRecord(marks[j + 1], stream));
    }
    C10_CUDA_CHECK(cudaEventSynchronize(marks[n]));
    if (r < 0) continue;
    for (size_t j = 0; j < n; ++j) {
      float ms = 0;
      C10_CUDA_CHECK(cudaEventElapsedTime(&ms, marks[j], marks[j + 1]));
      samples[(first + j) % n].push_back(ms * 1000.0f / kReps);
    }
  }
  for (auto& e : marks) C10_CUDA_CHECK(cudaEventDestroy(e));
  std::vector<float> us;
  for (auto& v : samples) {
    std::nth_element(v.begin(), v.begin() + kRounds / 2, v.end());
    us.push_back(v[kRounds / 2]);
  }
  return us;
}

bool same_bits_as(const at::Tensor& x, const at::Tensor& y) {
  const auto as_int = [](const at::Tensor& t) { return t.view(t.element_size() == 4 ? at::kInt : at::kShort); };
  return at::equal(as_int(x), as_int(y));
}

// A float8 product's scales (device pointers to one float each): set on the plan's descriptor for
// the call, cuBLAS's A being our b.
void set_scales(const GemmPlan& p, const float* scale_a, const float* scale_b) {
  const void* for_a = scale_b;
  const void* for_b = scale_a;
  check_blas(cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &for_a, sizeof(for_a)),
             "A scale");
  check_blas(cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &for_b, sizeof(for_b)),
             "B scale");
}

void run_gemm_plan(const GemmPlan& p, const at::Tensor& a, const at::Tensor& b, at::Tensor& c, void* workspace,
                   cudaStream_t stream, const float* scale_a = nullptr, const float* scale_b = nullptr) {
  if (scale_a != nullptr) set_scales(p, scale_a, scale_b);
  const float alpha = 1.0f, beta = 0.0f;
  check_blas(cublasLtMatmul(at::cuda::getCurrentCUDABlasLtHandle(), p.desc, &alpha, b.data_ptr(), p.first, a.data_ptr(),
                            p.second, &beta, c.data_ptr(), p.out, c.data_ptr(), p.out, &*p.algo, workspace, p.workspace,
                            stream),
             "cublasLtMatmul");
}

// One call of a shape both ways, in us.
struct Timing {
  float mm_us, chosen_us;
};

// One shape, on operands a and b made for it: builds its descriptors, times at::mm's call and every
// cuBLASLt candidate whose result equals it bit for bit, and keeps the fastest.
// `scale_a`, `scale_b`: a float8 shape's scales (one float each on the device), else undefined.
Timing search_shape(GemmPlan& p, const Shape& s, const at::Tensor& a, const at::Tensor& b, const at::Tensor& scale_a,
                    const at::Tensor& scale_b) {
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  const cudaDataType_t a_t = *blas_type(s.in), b_t = *blas_type(s.in_b), out_t = *blas_type(s.out);
  check_blas(cublasLtMatmulDescCreate(&p.desc, CUBLAS_COMPUTE_32F, CUDA_R_32F), "cublasLtMatmulDescCreate");
  const cublasOperation_t op_b = blas_op(s.fb), op_a = blas_op(s.fa);
  check_blas(cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_TRANSA, &op_b, sizeof(op_b)), "TRANSA");
  check_blas(cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_TRANSB, &op_a, sizeof(op_a)), "TRANSB");
  const float* sa = s.scaled ? scale_a.data_ptr<float>() : nullptr;
  const float* sb = s.scaled ? scale_b.data_ptr<float>() : nullptr;
  if (s.scaled) {
    const int8_t fast = s.fast_accum ? 1 : 0;
    check_blas(cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast, sizeof(fast)),
               "fast accumulation");
    set_scales(p, sa, sb);
  }
  check_blas(cublasLtMatrixLayoutCreate(&p.first, b_t, s.fb.rows, s.fb.cols, s.fb.ld), "layout of b");
  check_blas(cublasLtMatrixLayoutCreate(&p.second, a_t, s.fa.rows, s.fa.cols, s.fa.ld), "layout of a");
  check_blas(cublasLtMatrixLayoutCreate(&p.out, out_t, s.N, s.M, s.N), "layout of the result");

  const auto reference = [&] {
    return s.scaled ? plain_scaled_mm(a, b, scale_a, scale_b, s.out, s.fast_accum) : plain_mm(a, b, s.out);
  };
  const at::Tensor ref = reference();

  const size_t ws_size = at::cuda::getCUDABlasLtWorkspaceSize();
  void* const ws = at::cuda::getCUDABlasLtWorkspace();
  cublasLtMatmulPreference_t pref;
  check_blas(cublasLtMatmulPreferenceCreate(&pref), "cublasLtMatmulPreferenceCreate");
  check_blas(
      cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws_size, sizeof(ws_size)),
      "workspace preference");
  // cuBLAS's A is our b, its B our a; the result is fresh from the allocator (256 bytes or more).
  const std::pair<cublasLtMatmulPreferenceAttributes_t, uint32_t> alignments[] = {
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, s.align_b},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, s.align_a},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, 256},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, 256}};
  for (const auto& [attribute, bytes] : alignments)
    check_blas(cublasLtMatmulPreferenceSetAttribute(pref, attribute, &bytes, sizeof(bytes)), "alignment preference");
  constexpr int kCandidates = 16;
  cublasLtMatmulHeuristicResult_t found[kCandidates];
  int count = 0;
  const cublasStatus_t hs = cublasLtMatmulAlgoGetHeuristic(at::cuda::getCurrentCUDABlasLtHandle(), p.desc, p.first,
                                                           p.second, p.out, p.out, pref, kCandidates, found, &count);
  cublasLtMatmulPreferenceDestroy(pref);
  if (hs != CUBLAS_STATUS_SUCCESS) count = 0;

  // The candidates that run here and give at::mm's result bit for bit; at::mm's own call first.
  at::Tensor trial = at::empty_like(ref);
  std::vector<GemmPlan> plans{p};
  for (int i = 0; i < count; ++i) {
    if (found[i].state != CUBLAS_STATUS_SUCCESS || found[i].workspaceSize > ws_size) continue;
    GemmPlan candidate = p;
    candidate.algo = found[i].algo;
    candidate.workspace = found[i].workspaceSize;
    try {
      run_gemm_plan(candidate, a, b, trial, ws, stream, sa, sb);
      if (same_bits_as(trial, ref)) plans.push_back(candidate);
    } catch (const std::exception&) {
      // a candidate cuBLASLt offered but will not run here: the next one
    }
  }
  std::vector<std::function<void()>> calls;
  for (const GemmPlan& plan : plans)
    calls.push_back(plan.algo ? std::function<void()>([&] { run_gemm_plan(plan, a, b, trial, ws, stream, sa, sb); })
                              : std::function<void()>([&] { (void)reference(); }));
  const std::vector<float> us = time_under_load(calls, stream);

  // A candidate replaces at::mm's call only if it is at least 1 % faster: within that, the two
  // are the same to this timing, and at::mm's call is the one everything else has measured. A
  // float8 product takes the fastest candidate that is no more than 1 % slower: at::_scaled_mm
  // builds its descriptors and asks cuBLASLt's heuristic on every call, ~100 us of host time that
  // made Llama-3.2-1B's fp8 forward wait for the host, which a plan's call does not spend.
  const float mm_us = us[0];
  float bound = (s.scaled ? 1.01f : 0.99f) * mm_us;  // what a candidate must beat
  for (size_t i = 1; i < plans.size(); ++i)
    if (us[i] < bound) {
      bound = us[i];
      p.algo = plans[i].algo;
      p.workspace = plans[i].workspace;
    }
  const float chosen_us = p.algo ? bound : mm_us;
  if (log_each_shape())
    std::fprintf(stderr, "gemm search: M %lld N %lld K %lld%s: %s %.1f us, chosen %.1f us%s\n",
                 static_cast<long long>(s.M), static_cast<long long>(s.N), static_cast<long long>(s.K),
                 s.scaled ? " float8" : "", s.scaled ? "at::_scaled_mm" : "at::mm", mm_us, chosen_us,
                 p.algo ? "" : s.scaled ? " (at::_scaled_mm's)" : " (at::mm's)");
  return {mm_us, chosen_us};
}

#endif  // TUNEBENCH_GEMM_SEARCH

}  // namespace

namespace detail {

std::optional<ColumnMajor> column_major(const at::Tensor& t) {
  const int64_t r = t.size(0), c = t.size(1);
  if (t.stride(1) == 1 && t.stride(0) >= std::max<int64_t>(c, 1)) return ColumnMajor{false, c, r, t.stride(0)};
  if (t.stride(0) == 1 && t.stride(1) >= std::max<int64_t>(r, 1)) return ColumnMajor{true, r, c, t.stride(1)};
  return std::nullopt;
}

at::Tensor random_operand(int64_t rows, int64_t cols, const ColumnMajor& m, uint32_t align,
                          const at::TensorOptions& options) {
  const int64_t span = (m.cols - 1) * m.ld + m.rows;  // the storage the stored matrix covers
  const int64_t offset = align < 256 ? align / static_cast<int64_t>(options.dtype().itemsize()) : 0;
  const bool float8 = options.dtype().itemsize() == 1;  // no randn for float8: drawn in fp32, then cast
  const at::Tensor storage = float8 ? at::randn({span + offset}, options.dtype(at::kFloat)).to(options.dtype())
                                    : at::randn({span + offset}, options);
  return m.transpose ? storage.as_strided({rows, cols}, {1, m.ld}, offset)
                     : storage.as_strided({rows, cols}, {m.ld, 1}, offset);
}

}  // namespace detail

#ifdef TUNEBENCH_GEMM_SEARCH
namespace {

// The product of a shape both entry points share: its plan's algorithm once searched, else the
// reference call (`reference`), noting the shape the first time it is met.
template <class Reference>
at::Tensor planned(const Shape& shape, const at::Tensor& a, const at::Tensor& b, const Reference& reference,
                   const float* scale_a = nullptr, const float* scale_b = nullptr) {
  SearchState& s = search_state();
  GemmPlan* plan = nullptr;
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    const auto it = s.plans.find(shape);
    if (it != s.plans.end()) plan = it->second;
  }
  if (plan == nullptr) {  // met for the first time: searched between steps (search_pending)
    // Not inside a CUDA graph capture: the graph keeps the call it captured, so a search would
    // serve nothing there.
    cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    C10_CUDA_CHECK(cudaStreamIsCapturing(at::cuda::getCurrentCUDAStream(a.get_device()), &capture));
    if (capture != cudaStreamCaptureStatusNone) return reference();
    std::lock_guard<std::mutex> lock(s.mutex);
    if (std::find(s.pending.begin(), s.pending.end(), shape) == s.pending.end()) s.pending.push_back(shape);
    return reference();
  }
  const c10::cuda::CUDAGuard guard(a.device());
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  if (!plan->algo || plan->workspace > at::cuda::getCUDABlasLtWorkspaceSize()) return reference();
  at::Tensor c = at::empty({a.size(0), b.size(1)}, a.options().dtype(shape.out));
  run_gemm_plan(*plan, a, b, c, at::cuda::getCUDABlasLtWorkspace(), stream, scale_a, scale_b);
  return c;
}

// The shape of a x b as the search knows it, or nothing where the search does not apply: operands
// that are not 2-D CUDA matrices that chain, empty, a product that must itself be differentiated (a
// backward under create_graph: the reference records its history), or a layout cuBLAS cannot read.
std::optional<Shape> shape_of(const at::Tensor& a, const at::Tensor& b, at::ScalarType out) {
  if (!a.is_cuda() || !b.is_cuda() || a.dim() != 2 || b.dim() != 2 || a.size(0) == 0 || a.size(1) == 0 ||
      b.size(1) == 0 || b.size(0) != a.size(1) || a.get_device() != b.get_device() || !blas_type(a.scalar_type()) ||
      !blas_type(b.scalar_type()) || !blas_type(out))
    return std::nullopt;
  if (c10::GradMode::is_enabled() && (a.requires_grad() || b.requires_grad())) return std::nullopt;
  const auto fa = detail::column_major(a), fb = detail::column_major(b);
  if (!fa || !fb) return std::nullopt;
  return Shape{static_cast<int>(a.get_device()),
               a.size(0),
               b.size(1),
               a.size(1),
               *fa,
               *fb,
               a.scalar_type(),
               b.scalar_type(),
               out,
               pointer_alignment(a.data_ptr()),
               pointer_alignment(b.data_ptr())};
}

bool is_float8(at::ScalarType t) { return t == at::kFloat8_e4m3fn || t == at::kFloat8_e5m2; }

}  // namespace
#endif

at::Tensor mm(const at::Tensor& a, const at::Tensor& b, at::ScalarType out) {
#ifdef TUNEBENCH_GEMM_SEARCH
  const bool off = disabled_by_switch() != nullptr;
  const auto reference = [&] { return plain_mm(a, b, out); };
  if (off || a.scalar_type() != b.scalar_type() || a.scalar_type() == at::kFloat || is_float8(a.scalar_type()) ||
      (out != a.scalar_type() && out != at::kFloat))
    return reference();
  const auto shape = shape_of(a, b, out);
  return shape ? planned(*shape, a, b, reference) : reference();
#else
  return plain_mm(a, b, out);
#endif
}

at::Tensor scaled_mm(const at::Tensor& a, const at::Tensor& b, const at::Tensor& scale_a, const at::Tensor& scale_b,
                     at::ScalarType out, bool fast_accum) {
#ifdef TUNEBENCH_GEMM_SEARCH
  const bool off = disabled_by_switch() != nullptr;
  const auto reference = [&] { return plain_scaled_mm(a, b, scale_a, scale_b, out, fast_accum); };
  // Per-tensor scales only (one fp32 each, on a's device), float8 operands, a 16-bit or fp32 result.
  const bool tensorwise = scale_a.numel() == 1 && scale_b.numel() == 1 && scale_a.scalar_type() == at::kFloat &&
                          scale_b.scalar_type() == at::kFloat && scale_a.device() == a.device() &&
                          scale_b.device() == a.device();
  if (off || !tensorwise || !is_float8(a.scalar_type()) || !is_float8(b.scalar_type()) ||
      (a.scalar_type() == at::kFloat8_e5m2 && b.scalar_type() == at::kFloat8_e5m2) ||
      (out != at::kBFloat16 && out != at::kHalf && out != at::kFloat))
    return reference();
  auto shape = shape_of(a, b, out);
  if (!shape) return reference();
  shape->scaled = true;
  shape->fast_accum = fast_accum;
  return planned(*shape, a, b, reference, scale_a.data_ptr<float>(), scale_b.data_ptr<float>());
#elif defined(TUNEBENCH_WITH_CUDA) && TUNEBENCH_TORCH_AT_LEAST(2, 1)
  return at::_scaled_mm(a, b, scale_a, scale_b, std::nullopt, std::nullopt, out, fast_accum);
#else
  (void)a, (void)b, (void)scale_a, (void)scale_b, (void)out, (void)fast_accum;
  TORCH_CHECK(false, "float8 products need a CUDA build of the worker against libtorch 2.1 or newer");
#endif
}

bool pending() {
#ifdef TUNEBENCH_GEMM_SEARCH
  SearchState& s = search_state();
  std::lock_guard<std::mutex> lock(s.mutex);
  return !s.pending.empty();
#else
  return false;
#endif
}

void search_pending() {
#ifdef TUNEBENCH_GEMM_SEARCH
  SearchState& s = search_state();
  std::vector<Shape> requests;
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    requests.swap(s.pending);
  }
  const auto started = std::chrono::steady_clock::now();
  for (const Shape& r : requests) {
    const at::Device device(at::kCUDA, static_cast<c10::DeviceIndex>(r.device));
    const c10::cuda::CUDAGuard guard(device);
    auto plan = std::make_unique<GemmPlan>();
    std::optional<Timing> timing;
    try {
      const auto options = at::TensorOptions().device(device);
      at::Tensor scale_a, scale_b;  // a float8 shape's: any positive values exercise the epilogue
      if (r.scaled) {
        scale_a = at::full({1}, 0.37, options.dtype(at::kFloat));
        scale_b = at::full({1}, 1.9, options.dtype(at::kFloat));
      }
      timing = search_shape(*plan, r, detail::random_operand(r.M, r.K, r.fa, r.align_a, options.dtype(r.in)),
                            detail::random_operand(r.K, r.N, r.fb, r.align_b, options.dtype(r.in_b)), scale_a,
                            scale_b);
    } catch (const std::exception& e) {
      // Out of memory for the operands, or cuBLASLt refusing the shape: the shape keeps at::mm's
      // call (a plan without an algorithm), and the trial goes on.
      plan->algo.reset();
      if (log_each_shape())
        std::fprintf(stderr, "gemm search: M %lld N %lld K %lld: not searched (%s)\n", static_cast<long long>(r.M),
                     static_cast<long long>(r.N), static_cast<long long>(r.K), e.what());
    }
    std::lock_guard<std::mutex> lock(s.mutex);
    if (!s.plans.emplace(r, plan.get()).second) continue;  // searched already (a shape queued twice)
    s.summary.shapes += 1;
    s.summary.faster += plan->algo.has_value() ? 1 : 0;
    if (timing) {
      s.summary.cublas_us += timing->mm_us;
      s.summary.chosen_us += timing->chosen_us;
    }
    plan.release();
  }
  std::lock_guard<std::mutex> lock(s.mutex);
  s.summary.search_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
#endif
}

Summary summary() {
  Summary out;
#ifdef TUNEBENCH_GEMM_SEARCH
  {
    SearchState& s = search_state();
    std::lock_guard<std::mutex> lock(s.mutex);
    out = s.summary;
  }
#else
  out.disabled = "not in this build: it needs CUDA, libtorch 2.10 or later and the wheel's cuBLASLt at build time";
#endif
  if (const char* why = disabled_by_switch()) out.disabled = why;
  return out;
}

void use_switches(const Switches& switches) {
  g_search_on = switches.gemm_search;
  g_log_shapes = switches.gemm_log;
}

std::string describe(const Summary& s) {
  if (!s.disabled.empty()) return "GEMM algorithms: cuBLAS's pick (" + s.disabled + ")";
  char line[320];
  std::snprintf(line, sizeof line,
                "GEMM algorithms: %d shapes measured in %.1f s, %d run faster with another cuBLASLt algorithm of "
                "identical result (one call of each: %.0f us with cuBLAS's pick, %.0f us as chosen)",
                s.shapes, s.search_s, s.faster, s.cublas_us, s.chosen_us);
  return line;
}

}  // namespace tunebench::engine::gemm

// See gemm_search.h. cuBLASLt is column-major: a row-major C [M, N] = a [M, K] b [K, N] is the
// column-major C^T (N x M) = b^T a^T, so cuBLAS's first operand comes from b and its second from a.
#include "core/engine/kernels/gemm_search.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
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

const char* disabled_by_env() {
  const char* env = std::getenv("TUNEBENCH_GEMM");
  return env != nullptr && std::strcmp(env, "cublas") == 0 ? "TUNEBENCH_GEMM=cublas" : nullptr;
}

#ifdef TUNEBENCH_GEMM_SEARCH

bool log_each_shape() {  // TUNEBENCH_GEMM_LOG: each shape's times on stderr
  static const bool on = std::getenv("TUNEBENCH_GEMM_LOG") != nullptr;
  return on;
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
  at::ScalarType in, out;
  uint32_t align_a, align_b;  // the operands' pointer alignment, up to 256 bytes

  auto key() const {
    return std::make_tuple(device, M, N, K, fa.transpose, fa.ld, fb.transpose, fb.ld, in, out, align_a, align_b);
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

void run_gemm_plan(const GemmPlan& p, const at::Tensor& a, const at::Tensor& b, at::Tensor& c, void* workspace,
                   cudaStream_t stream) {
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
Timing search_shape(GemmPlan& p, const Shape& s, const at::Tensor& a, const at::Tensor& b) {
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  const cudaDataType_t in_t = *blas_type(s.in), out_t = *blas_type(s.out);
  check_blas(cublasLtMatmulDescCreate(&p.desc, CUBLAS_COMPUTE_32F, CUDA_R_32F), "cublasLtMatmulDescCreate");
  const cublasOperation_t op_b = blas_op(s.fb), op_a = blas_op(s.fa);
  check_blas(cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_TRANSA, &op_b, sizeof(op_b)), "TRANSA");
  check_blas(cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_TRANSB, &op_a, sizeof(op_a)), "TRANSB");
  check_blas(cublasLtMatrixLayoutCreate(&p.first, in_t, s.fb.rows, s.fb.cols, s.fb.ld), "layout of b");
  check_blas(cublasLtMatrixLayoutCreate(&p.second, in_t, s.fa.rows, s.fa.cols, s.fa.ld), "layout of a");
  check_blas(cublasLtMatrixLayoutCreate(&p.out, out_t, s.N, s.M, s.N), "layout of the result");

  const at::Tensor ref = plain_mm(a, b, s.out);

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
      run_gemm_plan(candidate, a, b, trial, ws, stream);
      if (same_bits_as(trial, ref)) plans.push_back(candidate);
    } catch (const std::exception&) {
      // a candidate cuBLASLt offered but will not run here: the next one
    }
  }
  std::vector<std::function<void()>> calls;
  for (const GemmPlan& plan : plans)
    calls.push_back(plan.algo ? std::function<void()>([&] { run_gemm_plan(plan, a, b, trial, ws, stream); })
                              : std::function<void()>([&] { (void)plain_mm(a, b, s.out); }));
  const std::vector<float> us = time_under_load(calls, stream);

  // A candidate replaces at::mm's call only if it is at least 1 % faster: within that, the two
  // are the same to this timing, and at::mm's call is the one everything else has measured.
  constexpr float kMargin = 0.99f;
  const float mm_us = us[0];
  float best_us = mm_us;
  for (size_t i = 1; i < plans.size(); ++i)
    if (us[i] < best_us && us[i] < kMargin * mm_us) {
      best_us = us[i];
      p.algo = plans[i].algo;
      p.workspace = plans[i].workspace;
    }
  if (log_each_shape())
    std::fprintf(stderr, "gemm search: M %lld N %lld K %lld: at::mm %.1f us, chosen %.1f us%s\n",
                 static_cast<long long>(s.M), static_cast<long long>(s.N), static_cast<long long>(s.K), mm_us, best_us,
                 p.algo ? "" : " (at::mm's)");
  return {mm_us, best_us};
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
  const at::Tensor storage = at::randn({span + offset}, options);
  return m.transpose ? storage.as_strided({rows, cols}, {1, m.ld}, offset)
                     : storage.as_strided({rows, cols}, {m.ld, 1}, offset);
}

}  // namespace detail

at::Tensor mm(const at::Tensor& a, const at::Tensor& b, at::ScalarType out) {
#ifdef TUNEBENCH_GEMM_SEARCH
  static const bool off = disabled_by_env() != nullptr;
  const auto in_t = blas_type(a.scalar_type());
  const auto out_t = blas_type(out);
  if (off || !a.is_cuda() || !b.is_cuda() || a.dim() != 2 || b.dim() != 2 || a.scalar_type() != b.scalar_type() ||
      a.scalar_type() == at::kFloat || !in_t || !out_t || (out != a.scalar_type() && out != at::kFloat) ||
      a.size(0) == 0 || a.size(1) == 0 || b.size(1) == 0)
    return plain_mm(a, b, out);
  // at::mm's own errors for operands that do not chain; and a product that must itself be
  // differentiated (a backward under create_graph) keeps at::mm, which records its history.
  if (b.size(0) != a.size(1) || a.get_device() != b.get_device()) return plain_mm(a, b, out);
  if (c10::GradMode::is_enabled() && (a.requires_grad() || b.requires_grad())) return plain_mm(a, b, out);
  const auto fa = detail::column_major(a), fb = detail::column_major(b);
  if (!fa || !fb) return plain_mm(a, b, out);

  const Shape shape{static_cast<int>(a.get_device()),
                    a.size(0),
                    b.size(1),
                    a.size(1),
                    *fa,
                    *fb,
                    a.scalar_type(),
                    out,
                    pointer_alignment(a.data_ptr()),
                    pointer_alignment(b.data_ptr())};
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
    if (capture != cudaStreamCaptureStatusNone) return plain_mm(a, b, out);
    std::lock_guard<std::mutex> lock(s.mutex);
    if (std::find(s.pending.begin(), s.pending.end(), shape) == s.pending.end()) s.pending.push_back(shape);
    return plain_mm(a, b, out);
  }
  const c10::cuda::CUDAGuard guard(a.device());
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  if (!plan->algo || plan->workspace > at::cuda::getCUDABlasLtWorkspaceSize()) return plain_mm(a, b, out);
  at::Tensor c = at::empty({a.size(0), b.size(1)}, a.options().dtype(out));
  run_gemm_plan(*plan, a, b, c, at::cuda::getCUDABlasLtWorkspace(), stream);
  return c;
#else
  return plain_mm(a, b, out);
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
      const auto options = at::TensorOptions().device(device).dtype(r.in);
      timing = search_shape(*plan, r, detail::random_operand(r.M, r.K, r.fa, r.align_a, options),
                            detail::random_operand(r.K, r.N, r.fb, r.align_b, options));
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
  if (const char* why = disabled_by_env()) out.disabled = why;
  return out;
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

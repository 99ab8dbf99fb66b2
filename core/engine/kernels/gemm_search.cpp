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
#include <algorithm>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
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

using ShapeKey = std::tuple<int, int64_t, int64_t, int64_t, int, int, int64_t, int64_t, int, int, uint32_t, uint32_t>;
struct ShapeKeyHash {
  size_t operator()(const ShapeKey& k) const {
    size_t h = 0;
    std::apply([&](const auto&... v) { ((h = h * 1000003u ^ std::hash<std::decay_t<decltype(v)>>{}(v)), ...); }, k);
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
  std::unordered_map<ShapeKey, GemmPlan*, ShapeKeyHash> plans;
  // Shapes met since the last search_pending(), with what it needs to rebuild their operands.
  struct Request {
    ShapeKey key;
    int64_t M, N, K;
    ColumnMajor fa, fb;
    at::ScalarType in, out;
    uint32_t align_a, align_b;
    at::Device device;
  };
  std::vector<Request> pending;
  Summary summary;
};
SearchState& search_state() {
  static SearchState* s = new SearchState();
  return *s;
}

// The GPU time of one call (us): the median of 5 samples of 10 back-to-back calls. Each sample
// starts behind a short spin on the stream, so the host has queued the calls before the first one
// runs and small shapes measure their kernels, not their launches.
float time_us(const std::function<void()>& call, cudaStream_t stream) {
  constexpr int kSamples = 5, kReps = 10;
  cudaEvent_t start, stop;
  C10_CUDA_CHECK(cudaEventCreate(&start));
  C10_CUDA_CHECK(cudaEventCreate(&stop));
  call();  // warm-up
  std::vector<float> us;
  for (int k = 0; k < kSamples; ++k) {
    at::cuda::sleep(400000);  // ~0.2 ms at the H200's clock: room for 10 launches
    C10_CUDA_CHECK(cudaEventRecord(start, stream));
    for (int i = 0; i < kReps; ++i) call();
    C10_CUDA_CHECK(cudaEventRecord(stop, stream));
    C10_CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    C10_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    us.push_back(ms * 1000.0f / kReps);
  }
  C10_CUDA_CHECK(cudaEventDestroy(start));
  C10_CUDA_CHECK(cudaEventDestroy(stop));
  std::nth_element(us.begin(), us.begin() + kSamples / 2, us.end());
  return us[kSamples / 2];
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

// One shape: builds its descriptors, times at::mm's call and every cuBLASLt candidate whose result
// equals it bit for bit, and keeps the fastest.
void search_shape(GemmPlan& p, const at::Tensor& a, const at::Tensor& b, at::ScalarType out, const ColumnMajor& fa,
                  const ColumnMajor& fb, cudaDataType_t in_t, cudaDataType_t out_t, Summary& summary) {
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  const int64_t M = a.size(0), N = b.size(1), K = a.size(1);
  check_blas(cublasLtMatmulDescCreate(&p.desc, CUBLAS_COMPUTE_32F, CUDA_R_32F), "cublasLtMatmulDescCreate");
  const cublasOperation_t op_b = blas_op(fb), op_a = blas_op(fa);
  check_blas(cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_TRANSA, &op_b, sizeof(op_b)), "TRANSA");
  check_blas(cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_TRANSB, &op_a, sizeof(op_a)), "TRANSB");
  check_blas(cublasLtMatrixLayoutCreate(&p.first, in_t, fb.rows, fb.cols, fb.ld), "layout of b");
  check_blas(cublasLtMatrixLayoutCreate(&p.second, in_t, fa.rows, fa.cols, fa.ld), "layout of a");
  check_blas(cublasLtMatrixLayoutCreate(&p.out, out_t, N, M, N), "layout of the result");

  const at::Tensor ref = plain_mm(a, b, out);
  const float mm_us = time_us([&] { (void)plain_mm(a, b, out); }, stream);

  const size_t ws_size = at::cuda::getCUDABlasLtWorkspaceSize();
  void* const ws = at::cuda::getCUDABlasLtWorkspace();
  cublasLtMatmulPreference_t pref;
  check_blas(cublasLtMatmulPreferenceCreate(&pref), "cublasLtMatmulPreferenceCreate");
  check_blas(
      cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws_size, sizeof(ws_size)),
      "workspace preference");
  const uint32_t align_b = pointer_alignment(b.data_ptr()), align_a = pointer_alignment(a.data_ptr()), align_c = 256;
  check_blas(
      cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &align_b, sizeof(align_b)),
      "alignment preference");
  check_blas(
      cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &align_a, sizeof(align_a)),
      "alignment preference");
  check_blas(
      cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &align_c, sizeof(align_c)),
      "alignment preference");
  check_blas(
      cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &align_c, sizeof(align_c)),
      "alignment preference");
  constexpr int kCandidates = 16;
  cublasLtMatmulHeuristicResult_t found[kCandidates];
  int count = 0;
  const cublasStatus_t hs = cublasLtMatmulAlgoGetHeuristic(at::cuda::getCurrentCUDABlasLtHandle(), p.desc, p.first,
                                                           p.second, p.out, p.out, pref, kCandidates, found, &count);
  cublasLtMatmulPreferenceDestroy(pref);
  if (hs != CUBLAS_STATUS_SUCCESS) count = 0;

  // A candidate replaces at::mm's call only if it is at least 1 % faster: within that, the two
  // are the same to this timing, and at::mm's call is the one everything else has measured.
  constexpr float kMargin = 0.99f;
  float best_us = mm_us;
  at::Tensor trial = at::empty_like(ref);
  for (int i = 0; i < count; ++i) {
    if (found[i].state != CUBLAS_STATUS_SUCCESS || found[i].workspaceSize > ws_size) continue;
    GemmPlan candidate = p;
    candidate.algo = found[i].algo;
    candidate.workspace = found[i].workspaceSize;
    float us = 0;
    try {
      run_gemm_plan(candidate, a, b, trial, ws, stream);
      if (!same_bits_as(trial, ref)) continue;
      us = time_us([&] { run_gemm_plan(candidate, a, b, trial, ws, stream); }, stream);
    } catch (const std::exception&) {
      continue;  // a candidate cuBLASLt offered but will not run here: the next one
    }
    if (us < best_us && us < kMargin * mm_us) {
      best_us = us;
      p.algo = candidate.algo;
      p.workspace = candidate.workspace;
    }
  }
  summary.shapes += 1;
  summary.faster += p.algo.has_value() ? 1 : 0;
  summary.cublas_us += mm_us;
  summary.chosen_us += best_us;
  if (std::getenv("TUNEBENCH_GEMM_LOG") != nullptr)
    std::fprintf(stderr, "gemm search: M %lld N %lld K %lld: at::mm %.1f us, chosen %.1f us%s\n",
                 static_cast<long long>(M), static_cast<long long>(N), static_cast<long long>(K), mm_us, best_us,
                 p.algo ? "" : " (at::mm's)");
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

  const ShapeKey key{a.get_device(),
                     a.size(0),
                     b.size(1),
                     a.size(1),
                     static_cast<int>(fa->transpose),
                     static_cast<int>(fb->transpose),
                     fa->ld,
                     fb->ld,
                     static_cast<int>(a.scalar_type()),
                     static_cast<int>(out),
                     pointer_alignment(a.data_ptr()),
                     pointer_alignment(b.data_ptr())};
  SearchState& s = search_state();
  GemmPlan* plan = nullptr;
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    const auto it = s.plans.find(key);
    if (it != s.plans.end()) plan = it->second;
  }
  if (plan == nullptr) {  // met for the first time: searched between steps (search_pending)
    // Not inside a CUDA graph capture: the graph keeps the call it captured, so a search would
    // serve nothing there.
    cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    C10_CUDA_CHECK(cudaStreamIsCapturing(at::cuda::getCurrentCUDAStream(a.get_device()), &capture));
    if (capture != cudaStreamCaptureStatusNone) return plain_mm(a, b, out);
    std::lock_guard<std::mutex> lock(s.mutex);
    if (std::none_of(s.pending.begin(), s.pending.end(), [&](const auto& r) { return r.key == key; }))
      s.pending.push_back({key, a.size(0), b.size(1), a.size(1), *fa, *fb, a.scalar_type(), out,
                           pointer_alignment(a.data_ptr()), pointer_alignment(b.data_ptr()), a.device()});
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
  std::vector<SearchState::Request> requests;
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    requests.swap(s.pending);
  }
  const auto started = std::chrono::steady_clock::now();
  for (const auto& r : requests) {
    const c10::cuda::CUDAGuard guard(r.device);
    auto plan = std::make_unique<GemmPlan>();
    Summary found;
    try {
      const auto options = at::TensorOptions().device(r.device).dtype(r.in);
      const at::Tensor a = detail::random_operand(r.M, r.K, r.fa, r.align_a, options);
      const at::Tensor b = detail::random_operand(r.K, r.N, r.fb, r.align_b, options);
      search_shape(*plan, a, b, r.out, r.fa, r.fb, *blas_type(r.in), *blas_type(r.out), found);
    } catch (const std::exception& e) {
      // Out of memory for the operands, or cuBLASLt refusing the shape: the shape keeps at::mm's
      // call (a plan without an algorithm), and the trial goes on.
      plan->algo.reset();
      found = Summary{};
      found.shapes = 1;
      if (std::getenv("TUNEBENCH_GEMM_LOG") != nullptr)
        std::fprintf(stderr, "gemm search: M %lld N %lld K %lld: not searched (%s)\n", static_cast<long long>(r.M),
                     static_cast<long long>(r.N), static_cast<long long>(r.K), e.what());
    }
    std::lock_guard<std::mutex> lock(s.mutex);
    if (!s.plans.emplace(r.key, plan.get()).second) continue;  // searched already (a shape queued twice)
    plan.release();
    s.summary.shapes += found.shapes;
    s.summary.faster += found.faster;
    s.summary.cublas_us += found.cublas_us;
    s.summary.chosen_us += found.chosen_us;
  }
  std::lock_guard<std::mutex> lock(s.mutex);
  s.summary.search_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
#endif
}

Summary summary() {
#ifdef TUNEBENCH_GEMM_SEARCH
  SearchState& s = search_state();
  std::lock_guard<std::mutex> lock(s.mutex);
  Summary out = s.summary;
  if (const char* why = disabled_by_env()) out.disabled = why;
  return out;
#else
  Summary out;
  out.disabled = "not in this build: it needs CUDA, libtorch 2.10 or later and the wheel's cuBLASLt at build time";
  if (const char* why = disabled_by_env()) out.disabled = why;
  return out;
#endif
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

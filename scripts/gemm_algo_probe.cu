// Would choosing the GEMM algorithm ourselves make the 7B's step faster? A probe for the GPU
// machine, not part of the build:
//
//   nvcc -arch=sm_90 -std=c++17 -O3 -I. scripts/gemm_algo_probe.cu -lcublas -lcublasLt -o /tmp/gemm_algo_probe &&
//   /tmp/gemm_algo_probe
//
// The worker's GEMMs go through at::mm, which calls cublasGemmEx with cuBLAS's own choice of
// kernel. For each of the 7B block's four linear layers (2,048 tokens) and each of its three GEMMs
// (forward y = x W^T and input gradient dx = dy W, bf16 out; weight gradient dW = dy^T x, fp32 out,
// as the worker computes it) this times:
//   gemmex   cublasGemmEx with the same operands, layouts and types as at::mm (the baseline)
//   lt#0     cuBLASLt's first heuristic choice (32 MiB workspace)
//   lt best  the fastest of cuBLASLt's heuristic list (up to 32 candidates), and its index
// Times are the median of 5 samples of 20 back-to-back calls between a pair of events. The last
// table scales each GEMM by 32 layers: what a step would save if every GEMM took its best.
// Results are compared with gemmex's (largest relative difference), since a different algorithm
// sums in another order.
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "scripts/probe_check.h"

namespace {

constexpr int kTokens = 2048;
constexpr int kLayers = 32;
constexpr size_t kWorkspace = size_t{32} << 20;

struct Linear {
  const char* name;
  int in, out;
};
const Linear kLinears[] = {{"wqkv", 4096, 12288}, {"wo", 4096, 4096}, {"w13", 4096, 22016}, {"w2", 11008, 4096}};

// One GEMM in cuBLAS's column-major terms: D(m x n) = op(A) op(B).
struct Gemm {
  std::string name;
  cublasOperation_t ta, tb;
  int m, n, k, lda, ldb, ldc;
  cudaDataType_t out;
};

// Row-major tensors seen column-major are their transposes; these are the calls at::mm makes.
std::vector<Gemm> gemms_of(const Linear& l) {
  const int T = kTokens;
  return {
      // y[T,out] = x[T,in] W[out,in]^T  ->  y^T(out x T) = W(out x in) x^T(in x T)
      {std::string(l.name) + " forward", CUBLAS_OP_T, CUBLAS_OP_N, l.out, T, l.in, l.in, l.in, l.out, CUDA_R_16BF},
      // dx[T,in] = dy[T,out] W[out,in]  ->  dx^T(in x T) = W^T(in x out) dy^T(out x T)
      {std::string(l.name) + " dX", CUBLAS_OP_N, CUBLAS_OP_N, l.in, T, l.out, l.in, l.out, l.in, CUDA_R_16BF},
      // dW[out,in] = dy[T,out]^T x[T,in]  ->  dW^T(in x out) = x^T(in x T) dy(T x out)
      {std::string(l.name) + " dW fp32", CUBLAS_OP_N, CUBLAS_OP_T, l.in, l.out, T, l.in, l.out, l.in, CUDA_R_32F},
  };
}

__global__ void fill(__nv_bfloat16* p, size_t n, unsigned seed) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n; i += size_t{gridDim.x} * blockDim.x) {
    unsigned h = (static_cast<unsigned>(i) ^ seed) * 2654435761u;
    h ^= h >> 13;
    p[i] = __float2bfloat16((static_cast<float>(h & 0xffff) / 65536.0f - 0.5f) * 0.1f);
  }
}

float median(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

template <class F>
float time_ms(F&& call) {
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  call();  // warm-up
  std::vector<float> ms;
  for (int s = 0; s < 5; ++s) {
    CHECK(cudaEventRecord(a));
    for (int r = 0; r < 20; ++r) call();
    CHECK(cudaEventRecord(b));
    CHECK(cudaEventSynchronize(b));
    float t = 0;
    CHECK(cudaEventElapsedTime(&t, a, b));
    ms.push_back(t / 20);
  }
  CHECK(cudaGetLastError());
  return median(ms);
}

// Largest |x - y| / max|y| between two outputs of the same type.
double rel_diff(const void* x, const void* y, size_t n, cudaDataType_t t) {
  const size_t bytes = n * (t == CUDA_R_32F ? 4 : 2);
  std::vector<unsigned char> hx(bytes), hy(bytes);
  CHECK(cudaMemcpy(hx.data(), x, bytes, cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(hy.data(), y, bytes, cudaMemcpyDeviceToHost));
  auto at = [&](const std::vector<unsigned char>& h, size_t i) -> double {
    if (t == CUDA_R_32F) return reinterpret_cast<const float*>(h.data())[i];
    return __bfloat162float(reinterpret_cast<const __nv_bfloat16*>(h.data())[i]);
  };
  double diff = 0, scale = 0;
  for (size_t i = 0; i < n; i += 7) {  // a sample is enough to tell rounding from a wrong result
    diff = std::max(diff, std::fabs(at(hx, i) - at(hy, i)));
    scale = std::max(scale, std::fabs(at(hy, i)));
  }
  return scale > 0 ? diff / scale : diff;
}

}  // namespace

int main() {
  cublasHandle_t blas;
  cublasLtHandle_t lt;
  CHECK_BLAS(cublasCreate(&blas));
  CHECK_BLAS(cublasLtCreate(&lt));
  void* workspace = nullptr;
  CHECK(cudaMalloc(&workspace, kWorkspace));
  CHECK_BLAS(cublasSetWorkspace(blas, workspace, kWorkspace));

  int version = 0;
  CHECK_BLAS(cublasGetVersion(blas, &version));
  cudaDeviceProp prop{};
  CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("device %s, cuBLAS %d, cuBLASLt %zu, %d tokens, %d layers\n", prop.name, version, cublasLtGetVersion(),
              kTokens, kLayers);
  std::printf("%-16s %9s %9s %9s %5s %8s %8s %10s\n", "gemm", "gemmex us", "lt#0 us", "best us", "idx", "TFLOP/s",
              "best TF", "rel diff");

  double total_ex = 0, total_best = 0;
  for (const Linear& l : kLinears) {
    for (const Gemm& g : gemms_of(l)) {
      const size_t a_n = size_t(g.lda) * (g.ta == CUBLAS_OP_N ? g.k : g.m);
      const size_t b_n = size_t(g.ldb) * (g.tb == CUBLAS_OP_N ? g.n : g.k);
      const size_t d_n = size_t(g.ldc) * g.n;
      const size_t d_bytes = d_n * (g.out == CUDA_R_32F ? 4 : 2);
      __nv_bfloat16 *a, *b;
      void *d_ex, *d_lt;
      CHECK(cudaMalloc(&a, a_n * 2));
      CHECK(cudaMalloc(&b, b_n * 2));
      CHECK(cudaMalloc(&d_ex, d_bytes));
      CHECK(cudaMalloc(&d_lt, d_bytes));
      fill<<<1024, 256>>>(a, a_n, 1);
      fill<<<1024, 256>>>(b, b_n, 2);
      const float alpha = 1, beta = 0;

      auto gemmex = [&] {
        CHECK_BLAS(cublasGemmEx(blas, g.ta, g.tb, g.m, g.n, g.k, &alpha, a, CUDA_R_16BF, g.lda, b, CUDA_R_16BF, g.ldb,
                                &beta, d_ex, g.out, g.ldc, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
      };
      const float ex_ms = time_ms(gemmex);

      cublasLtMatmulDesc_t desc;
      CHECK_BLAS(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
      CHECK_BLAS(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &g.ta, sizeof(g.ta)));
      CHECK_BLAS(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &g.tb, sizeof(g.tb)));
      cublasLtMatrixLayout_t la, lb, ld;
      CHECK_BLAS(cublasLtMatrixLayoutCreate(&la, CUDA_R_16BF, g.ta == CUBLAS_OP_N ? g.m : g.k,
                                            g.ta == CUBLAS_OP_N ? g.k : g.m, g.lda));
      CHECK_BLAS(cublasLtMatrixLayoutCreate(&lb, CUDA_R_16BF, g.tb == CUBLAS_OP_N ? g.k : g.n,
                                            g.tb == CUBLAS_OP_N ? g.n : g.k, g.ldb));
      CHECK_BLAS(cublasLtMatrixLayoutCreate(&ld, g.out, g.m, g.n, g.ldc));
      cublasLtMatmulPreference_t pref;
      CHECK_BLAS(cublasLtMatmulPreferenceCreate(&pref));
      CHECK_BLAS(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &kWorkspace,
                                                      sizeof(kWorkspace)));
      cublasLtMatmulHeuristicResult_t results[32];
      int found = 0;
      CHECK_BLAS(cublasLtMatmulAlgoGetHeuristic(lt, desc, la, lb, ld, ld, pref, 32, results, &found));

      float lt0_ms = -1, best_ms = ex_ms;
      int best_idx = -1;
      for (int i = 0; i < found; ++i) {
        if (results[i].state != CUBLAS_STATUS_SUCCESS) continue;
        auto call = [&] {
          CHECK_BLAS(cublasLtMatmul(lt, desc, &alpha, a, la, b, lb, &beta, d_lt, ld, d_lt, ld, &results[i].algo,
                                    workspace, kWorkspace, 0));
        };
        const float ms = time_ms(call);
        if (i == 0) lt0_ms = ms;
        if (ms < best_ms) {
          best_ms = ms;
          best_idx = i;
        }
      }
      double diff = 0;
      if (best_idx >= 0) {  // leave the best one's output in d_lt
        CHECK_BLAS(cublasLtMatmul(lt, desc, &alpha, a, la, b, lb, &beta, d_lt, ld, d_lt, ld, &results[best_idx].algo,
                                  workspace, kWorkspace, 0));
        gemmex();
        CHECK(cudaDeviceSynchronize());
        diff = rel_diff(d_lt, d_ex, d_n, g.out);
      }
      const double flop = 2.0 * g.m * g.n * g.k;
      std::printf("%-16s %9.1f %9.1f %9.1f %5d %8.0f %8.0f %10.2e\n", g.name.c_str(), ex_ms * 1e3, lt0_ms * 1e3,
                  best_ms * 1e3, best_idx, flop / ex_ms / 1e9, flop / best_ms / 1e9, diff);
      total_ex += ex_ms * kLayers;
      total_best += best_ms * kLayers;

      cublasLtMatmulPreferenceDestroy(pref);
      cublasLtMatrixLayoutDestroy(la);
      cublasLtMatrixLayoutDestroy(lb);
      cublasLtMatrixLayoutDestroy(ld);
      cublasLtMatmulDescDestroy(desc);
      CHECK(cudaFree(a));
      CHECK(cudaFree(b));
      CHECK(cudaFree(d_ex));
      CHECK(cudaFree(d_lt));
    }
  }
  std::printf("x %d layers: gemmex %.1f ms, each GEMM at its best %.1f ms, saving %.1f ms a step\n", kLayers, total_ex,
              total_best, total_ex - total_best);
  return 0;
}

// How fast can the 7B's AdamW go? A probe for the GPU machine, not part of the build:
//
//   nvcc -arch=sm_90 -std=c++17 -O3 -I. scripts/adamw_bandwidth_probe.cu -o /tmp/adamw_probe && /tmp/adamw_probe
//
// It includes the worker's kernel file, so the baseline is the worker's own adamw_step and the
// variants reuse its update (adamw_one) and tensor table. Tensors: 16 blocks of the 7B's shapes plus
// the embedding and the head (3.5 G parameters; each variant's time is scaled to 6.74 G). Every
// variant writes a bf16 copy of the parameter, as `compile fused` does on one GPU.
//   base        the worker's kernel (4 float4 loads in flight per thread)
//   unroll2     two float4 groups per thread per iteration (8 loads in flight)
//   unroll2-cs  the same with streaming loads and stores (__ldcs / __stcs)
//   unroll4-cs  four groups, streaming
//   bf16-grad   unroll2-cs reading a bf16 gradient (2 bytes less per parameter)
//   ceiling     unroll2-cs's traffic with trivial arithmetic, ceiling-u4 with four groups (on the
//               H200 these were as slow as unroll2-cs: the streaming hints, not the arithmetic,
//               cost the time; the copy below is the reference for what the memory gives)
//   memcpy      cudaMemcpyAsync of 16 GiB, device to device
// Then each variant's result is compared, byte for byte, with base on tensors of odd lengths.
#include "core/engine/kernels/fused_kernels.cu"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "scripts/probe_check.h"

namespace probe {
using namespace tunebench::kernels;

enum class Variant { Plain, Streaming, Bf16Grad, Ceiling };

template <Variant V>
__device__ __forceinline__ float4 load(const float* p) {
  if constexpr (V == Variant::Plain)
    return *reinterpret_cast<const float4*>(p);
  else
    return __ldcs(reinterpret_cast<const float4*>(p));
}
template <Variant V>
__device__ __forceinline__ void store(float* p, float4 v) {
  if constexpr (V == Variant::Plain)
    *reinterpret_cast<float4*>(p) = v;
  else
    __stcs(reinterpret_cast<float4*>(p), v);
}

// gb: the bf16 gradients (Bf16Grad only), indexed as t.g. U float4 groups per thread per iteration.
template <Variant V, int U>
__global__ void __launch_bounds__(kAdamwThreads)
    variant_kernel(const __grid_constant__ AdamwTable t, const __grid_constant__ AdamwStreams<kAdamwMaxTensors> gb,
                   AdamwScalars s, const float* __restrict__ step) {
  const int i = block_tensor(t.first_chunk, t.count);
  const auto [step_size, bc2_sqrt] = adamw_bias(s, step);
  const int64_t begin = (static_cast<int64_t>(blockIdx.x) - t.first_chunk[i]) * kAdamwChunk;
  const int64_t end = min(begin + kAdamwChunk, t.n[i]);
  float* __restrict__ p = t.p[i];
  const float* __restrict__ g = t.g[i];
  const __nv_bfloat16* __restrict__ g16 = reinterpret_cast<const __nv_bfloat16*>(gb.g[i]);
  float* __restrict__ m = t.m[i];
  float* __restrict__ v = t.v[i];
  auto* __restrict__ c = static_cast<__nv_bfloat16*>(t.c[i]);
  // Lengths are multiples of 4 and pointers 16-byte aligned here (cudaMalloc; the sets above).
  constexpr int64_t kStep = 4 * kAdamwThreads;
  for (int64_t e0 = begin + 4 * threadIdx.x; e0 < end; e0 += U * kStep) {
    float4 pv[U], gv[U], mv[U], vv[U];
    bool live[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int64_t e = e0 + u * kStep;
      live[u] = e < end;
      if (!live[u]) continue;
      pv[u] = load<V>(p + e);
      if constexpr (V == Variant::Bf16Grad) {
        const uint2 raw = __ldcs(reinterpret_cast<const uint2*>(g16 + e));
        const auto* h = reinterpret_cast<const __nv_bfloat162*>(&raw);
        const float2 a = __bfloat1622float2(h[0]), b = __bfloat1622float2(h[1]);
        gv[u] = make_float4(a.x, a.y, b.x, b.y);
      } else {
        gv[u] = load<V>(g + e);
      }
      mv[u] = load<V>(m + e);
      vv[u] = load<V>(v + e);
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      if (!live[u]) continue;
      const int64_t e = e0 + u * kStep;
      if constexpr (V == Variant::Ceiling) {
        pv[u].x += gv[u].x, pv[u].y += gv[u].y, pv[u].z += gv[u].z, pv[u].w += gv[u].w;
        mv[u].x += gv[u].x, mv[u].y += gv[u].y, mv[u].z += gv[u].z, mv[u].w += gv[u].w;
        vv[u].x += gv[u].x, vv[u].y += gv[u].y, vv[u].z += gv[u].z, vv[u].w += gv[u].w;
      } else {
        adamw_one(pv[u].x, gv[u].x, mv[u].x, vv[u].x, s, step_size, bc2_sqrt);
        adamw_one(pv[u].y, gv[u].y, mv[u].y, vv[u].y, s, step_size, bc2_sqrt);
        adamw_one(pv[u].z, gv[u].z, mv[u].z, vv[u].z, s, step_size, bc2_sqrt);
        adamw_one(pv[u].w, gv[u].w, mv[u].w, vv[u].w, s, step_size, bc2_sqrt);
      }
      store<V>(p + e, pv[u]);
      store<V>(m + e, mv[u]);
      store<V>(v + e, vv[u]);
      const float out[4] = {pv[u].x, pv[u].y, pv[u].z, pv[u].w};
      storev<4>(c + e, out);
    }
  }
}

struct Set {
  std::vector<AdamwTensor> tensors;
  std::vector<void*> bf16_grads;
  std::vector<void*> owned;
  int64_t params = 0;
};

void* dalloc(size_t bytes) {
  void* p = nullptr;
  CHECK(cudaMalloc(&p, bytes));
  return p;
}

__global__ void fill(float* x, int64_t n, uint32_t seed, float scale, bool positive) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{gridDim.x} * blockDim.x) {
    uint32_t h = static_cast<uint32_t>(i) * 2654435761u ^ seed;
    h ^= h >> 15, h *= 2246822519u, h ^= h >> 13;
    const float u = (h & 0xffffff) / 16777216.f - 0.5f;
    x[i] = positive ? fabsf(u) * scale : u * scale;
  }
}
__global__ void to_bf16(const float* x, __nv_bfloat16* y, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{gridDim.x} * blockDim.x)
    y[i] = __float2bfloat16(x[i]);
}

Set make_set(const std::vector<int64_t>& lengths, uint32_t seed) {
  Set s;
  for (int64_t n : lengths) {
    AdamwTensor t{};
    auto* p = static_cast<float*>(dalloc(n * 4));
    auto* g = static_cast<float*>(dalloc(n * 4));
    auto* m = static_cast<float*>(dalloc(n * 4));
    auto* v = static_cast<float*>(dalloc(n * 4));
    void* c = dalloc(n * 2);
    void* gb = dalloc(n * 2);
    fill<<<1024, 256>>>(p, n, seed++, 0.04f, false);
    fill<<<1024, 256>>>(g, n, seed++, 0.002f, false);
    fill<<<1024, 256>>>(m, n, seed++, 0.001f, false);
    fill<<<1024, 256>>>(v, n, seed++, 1e-6f, true);
    to_bf16<<<1024, 256>>>(g, static_cast<__nv_bfloat16*>(gb), n);
    t.param = p, t.grad = g, t.exp_avg = m, t.exp_avg_sq = v, t.numel = n, t.copy = c;
    s.tensors.push_back(t);
    s.bf16_grads.push_back(gb);
    s.owned.insert(s.owned.end(), {p, g, m, v, c, gb});
    s.params += n;
  }
  CHECK(cudaDeviceSynchronize());
  return s;
}

const AdamwScalars kScalars{1e-4f, 0.9f, 0.95f, 0.1f, 1e-8f};

template <Variant V, int U>
void launch_variant(const Set& set, const float* step) {
  for (size_t begin = 0; begin < set.tensors.size(); begin += kAdamwMaxTensors) {
    AdamwTable t{};
    AdamwStreams<kAdamwMaxTensors> gb{};
    int64_t chunks = 0;
    for (size_t i = begin; i < set.tensors.size() && t.count < kAdamwMaxTensors; ++i) {
      const AdamwTensor& x = set.tensors[i];
      const int k = t.count++;
      t.set(k, x.param, static_cast<const float*>(x.grad), x.exp_avg, x.exp_avg_sq);
      gb.g[k] = static_cast<const float*>(set.bf16_grads[i]);
      t.c[k] = x.copy;
      t.n[k] = x.numel;
      t.first_chunk[k] = chunks;
      chunks += (x.numel + kAdamwChunk - 1) / kAdamwChunk;
    }
    t.first_chunk[t.count] = chunks;
    variant_kernel<V, U><<<static_cast<unsigned>(chunks), kAdamwThreads>>>(t, gb, kScalars, step);
  }
  CHECK(cudaGetLastError());
}

void launch_base(const Set& set, const float* step) {
  if (!adamw_step(set.tensors.data(), static_cast<int>(set.tensors.size()), step, kScalars.lr, kScalars.beta1,
                  kScalars.beta2, kScalars.weight_decay, kScalars.eps, ElemType::BF16, nullptr)) {
    std::fprintf(stderr, "adamw_step refused the set\n");
    std::exit(1);
  }
  CHECK(cudaGetLastError());
}

// What main times, in this order (base again last: the machine's drift over the run): the bytes
// each moves per parameter, and whether it computes base's update (then compared byte for byte).
struct Candidate {
  const char* name;
  void (*launch)(const Set&, const float*);
  double bytes_per_param;
  bool same_update;
};
const Candidate kCandidates[] = {
    {"base", launch_base, 30, false},
    {"unroll2", launch_variant<Variant::Plain, 2>, 30, true},
    {"unroll2-cs", launch_variant<Variant::Streaming, 2>, 30, true},
    {"unroll4-cs", launch_variant<Variant::Streaming, 4>, 30, true},
    {"bf16-grad", launch_variant<Variant::Bf16Grad, 2>, 28, false},
    {"ceiling", launch_variant<Variant::Ceiling, 2>, 30, false},
    {"ceiling-u4", launch_variant<Variant::Ceiling, 4>, 30, false},
    {"base", launch_base, 30, false},
};

float median(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

template <typename F>
float time_ms(F&& f, int reps = 5) {
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  f();  // warm-up
  std::vector<float> ms;
  for (int r = 0; r < reps; ++r) {
    CHECK(cudaEventRecord(a));
    f();
    CHECK(cudaEventRecord(b));
    CHECK(cudaEventSynchronize(b));
    float t = 0;
    CHECK(cudaEventElapsedTime(&t, a, b));
    ms.push_back(t);
  }
  return median(ms);
}

std::vector<uint8_t> bytes_of(const Set& s) {
  std::vector<uint8_t> out;
  for (const auto& t : s.tensors) {
    for (const void* ptr : {static_cast<const void*>(t.param), static_cast<const void*>(t.exp_avg),
                            static_cast<const void*>(t.exp_avg_sq), static_cast<const void*>(t.copy)}) {
      const size_t n = t.numel * (ptr == t.copy ? 2 : 4);
      const size_t at = out.size();
      out.resize(at + n);
      CHECK(cudaMemcpy(out.data() + at, ptr, n, cudaMemcpyDeviceToHost));
    }
  }
  return out;
}

}  // namespace probe

int main() {
  using namespace probe;
  float* step = nullptr;
  CHECK(cudaMalloc(&step, sizeof(float)));
  const float three = 3.f;
  CHECK(cudaMemcpy(step, &three, sizeof(float), cudaMemcpyHostToDevice));

  // The 7B's tensors: 16 blocks (wqkv, wo, w13, w2, two norms), the embedding and the head.
  std::vector<int64_t> lengths;
  for (int b = 0; b < 16; ++b)
    for (int64_t n : {int64_t{12288} * 4096, int64_t{4096} * 4096, int64_t{22016} * 4096, int64_t{4096} * 11008,
                      int64_t{4096}, int64_t{4096}})
      lengths.push_back(n);
  lengths.push_back(int64_t{32000} * 4096);
  lengths.push_back(int64_t{32000} * 4096);
  const Set big = make_set(lengths, 1);
  const double scale = 6.738e9 / static_cast<double>(big.params);
  std::printf("adamw probe: %zu tensors, %.3f G parameters; times scaled to the 7B's 6.738 G\n", big.tensors.size(),
              big.params / 1e9);
  std::printf("%-12s %10s %12s %10s\n", "variant", "7B ms", "bytes/param", "GB/s");
  for (const Candidate& c : kCandidates) {
    const float ms = time_ms([&] { c.launch(big, step); });
    std::printf("%-12s %10.2f %12.0f %10.0f\n", c.name, ms * scale, c.bytes_per_param,
                c.bytes_per_param * big.params / (ms * 1e-3) / 1e9);
  }
  {
    const size_t n = size_t{16} << 30;
    void* a = dalloc(n);
    void* b = dalloc(n);
    const float ms = time_ms([&] { CHECK(cudaMemcpyAsync(b, a, n, cudaMemcpyDeviceToDevice)); });
    std::printf("%-12s %10s %12s %10.0f\n", "memcpy", "-", "-", 2.0 * n / (ms * 1e-3) / 1e9);
    CHECK(cudaFree(a));
    CHECK(cudaFree(b));
  }
  for (void* p : big.owned) CHECK(cudaFree(p));

  // Byte-for-byte against base: lengths over several chunks, with a partial last group.
  const std::vector<int64_t> odd = {3 * kAdamwChunk + 8, 4104, 8, int64_t{4096} * 4096};
  const std::vector<uint8_t> want = [&] {
    const Set s = make_set(odd, 7);
    launch_base(s, step);
    CHECK(cudaDeviceSynchronize());
    return bytes_of(s);
  }();
  for (const Candidate& c : kCandidates) {
    if (!c.same_update) continue;
    const Set s = make_set(odd, 7);
    c.launch(s, step);
    CHECK(cudaDeviceSynchronize());
    const auto got = bytes_of(s);
    size_t differ = 0;
    for (size_t i = 0; i < got.size(); ++i) differ += got[i] != want[i];
    std::printf("%-12s %zu of %zu bytes differ from base\n", c.name, differ, got.size());
  }
  return 0;
}

// GPU check of the fused kernels: every fused op's forward and input/weight gradients on random
// inputs of the 7B model's shapes and then of the other models' (check_model_shapes), against the same op computed in
// float64 on the GPU (the composite reference path of kernels/fused_ops.cpp), next to the 16-bit composite ops the
// kernels replace. Prints one table row per op and tensor; exits 1 when a kernel misses its
// tolerance. Also times kernel against composite (CUDA events, median of 20).
//
// Run on a GPU machine (scripts/gpu-bench.sh kernels). Not a ctest: CI has no GPU. The float8 rows
// are in kernel_check_fp8.cpp; the harness both files use is declared in kernel_check.h.
//
// Tolerances, relative L2 error against float64: fp32 outputs 1e-5; bf16 outputs 1e-2 (8 bits
// of mantissa: ~4e-3 per element); fp8 matmuls 8e-2 (e4m3 keeps 3 mantissa bits).
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAEvent.h>
#include <c10/cuda/CUDAException.h>
#include <torch/csrc/autograd/autograd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "core/engine/compat.h"
#include "core/engine/kernels/fp8_linear.h"
#include "core/engine/kernels/fused_kernels.h"
#include "core/engine/kernels/fused_ops.h"
#include "core/engine/kernels/gemm_search.h"
#include "core/engine/optim/optimizer.h"
#include "tests/gpu/kernel_check.h"

namespace fused = tunebench::engine::fused;
using tunebench::engine::Optimizer;

namespace tunebench::kernel_check {

bool g_failed = false;

at::TensorOptions cuda(at::ScalarType t) { return at::TensorOptions().device(at::kCUDA).dtype(t); }

void poison() {
  at::Tensor p = at::full({int64_t{1} << 29}, NAN, cuda(at::kFloat));
  p.reset();
}

double byte_diff(const at::Tensor& a, const at::Tensor& b) {
  const auto bytes = [](const at::Tensor& t) { return t.contiguous().view(at::kByte).to(at::kInt); };
  return (bytes(a) - bytes(b)).abs().max().item<double>();
}

double rel_l2(const at::Tensor& out, const at::Tensor& ref) {
  const at::Tensor o = out.to(at::kDouble), r = ref.to(at::kDouble);
  if (!at::isfinite(o).all().item<bool>()) return INFINITY;
  return ((o - r).norm() / (r.norm() + 1e-30)).item<double>();
}

void row(const std::string& op, const std::string& tensor, double kernel_err, double composite_err, double tol) {
  const bool ok = kernel_err <= tol;
  g_failed |= !ok;
  std::printf("%-22s %-8s %12.3e %12.3e %9.0e  %s\n", op.c_str(), tensor.c_str(), kernel_err, composite_err, tol,
              ok ? "ok" : "FAIL");
}

double time_ms(const std::function<void()>& fn, int reps) {
  for (int i = 0; i < 3; ++i) fn();
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    at::cuda::CUDAEvent a(cudaEventDefault), b(cudaEventDefault);
    a.record();
    fn();
    b.record();
    b.synchronize();
    t.push_back(a.elapsed_time(b));
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

std::vector<Timing> g_timings;

at::Tensor randn(at::IntArrayRef sizes, at::ScalarType t, double scale) {
  return (at::randn(sizes, cuda(at::kFloat)) * scale).to(t);
}

}  // namespace tunebench::kernel_check

using namespace tunebench::kernel_check;

namespace {

// Runs `op` (inputs -> outputs) three ways: kernels on the 16-bit inputs, composite on the same
// inputs, composite in float64; compares outputs and the gradients of sum(out * probe).
void check(const std::string& name, const std::vector<at::Tensor>& inputs, const std::vector<std::string>& input_names,
           const std::vector<std::string>& output_names,
           const std::function<std::vector<at::Tensor>(const std::vector<at::Tensor>&)>& op,
           const std::vector<double>& tolerances /* per output, then per input gradient */) {
  auto run = [&](bool kernels, bool fp64, std::vector<at::Tensor>* grads, const std::vector<at::Tensor>& probes) {
    fused::set_kernels_enabled(kernels);
    std::vector<at::Tensor> in;
    for (const auto& x : inputs) {
      at::Tensor t = fp64 && at::isFloatingType(x.scalar_type()) ? x.to(at::kDouble) : x.clone();
      if (at::isFloatingType(t.scalar_type())) t.requires_grad_(true);
      in.push_back(t);
    }
    poison();
    auto out = op(in);
    if (grads && !probes.empty()) {
      at::Tensor total = at::zeros({}, cuda(at::kDouble));
      for (size_t i = 0; i < out.size(); ++i) total = total + (out[i].to(at::kDouble) * probes[i]).sum();
      std::vector<at::Tensor> diff_in;
      for (const auto& t : in)
        if (t.requires_grad()) diff_in.push_back(t);
      *grads = torch::autograd::grad({total}, diff_in);
    }
    for (auto& o : out) o = o.detach();
    return out;
  };
  std::vector<at::Tensor> probes;
  {
    auto shapes = run(false, false, nullptr, {});
    for (const auto& o : shapes) probes.push_back(at::randn(o.sizes(), cuda(at::kDouble)));
  }
  std::vector<at::Tensor> gk, gc, gr;
  const auto ok = run(true, false, &gk, probes);
  const auto oc = run(false, false, &gc, probes);
  const auto orf = run(false, true, &gr, probes);
  size_t t = 0;
  for (size_t i = 0; i < ok.size(); ++i, ++t)
    row(name, output_names[i], rel_l2(ok[i], orf[i]), rel_l2(oc[i], orf[i]), tolerances[t]);
  size_t g = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!at::isFloatingType(inputs[i].scalar_type())) continue;
    row(name, "d" + input_names[i], rel_l2(gk[g], gr[g]), rel_l2(gc[g], gr[g]), tolerances[t]);
    ++g, ++t;
  }
  // forward + backward time, kernels against composite
  auto fwd_bwd = [&](bool kernels) {
    return [&, kernels] {
      std::vector<at::Tensor> dummy;
      fused::set_kernels_enabled(kernels);
      std::vector<at::Tensor> in;
      for (const auto& x : inputs) {
        at::Tensor v = x.detach();
        if (at::isFloatingType(v.scalar_type())) v.requires_grad_(true);
        in.push_back(v);
      }
      auto out = op(in);
      std::vector<at::Tensor> grads_out;
      for (size_t i = 0; i < out.size(); ++i) grads_out.push_back(probes[i].to(out[i].scalar_type()));
      torch::autograd::backward(out, grads_out);
    };
  };
  g_timings.push_back({name, time_ms(fwd_bwd(true)), time_ms(fwd_bwd(false))});
  fused::set_kernels_enabled(true);
}

// The output dtype an op should use: float64 when the reference runs, else `t`.
at::ScalarType out_dtype(const std::vector<at::Tensor>& in, at::ScalarType t) {
  return in[0].scalar_type() == at::kDouble ? at::kDouble : t;
}

// The shapes of the other models: head sizes 64-256 with the
// padded ones (100 -> 104), grouped-query ratios 1-8, the rows of dims 2048-8192 and an odd
// multiple of 16, the feed-forward widths, vocabularies up to 256k and one that is no multiple of
// 8 (the scalar path). At 1,024 tokens to keep the float64 references quick.
void check_model_shapes() {
  const int64_t T = 1024;
  const double eps = 1e-5;
  std::printf("\n%-22s %-8s %12s %12s %9s\n", "op (model shapes)", "tensor", "kernel err", "composite", "tolerance");
  struct Rope {
    int64_t hd, heads, kv, padded;
  };
  for (const Rope r : {Rope{128, 32, 8, 128}, Rope{64, 32, 8, 64}, Rope{96, 32, 32, 96}, Rope{80, 32, 8, 80},
                       Rope{100, 32, 32, 104}, Rope{112, 28, 4, 112}, Rope{256, 16, 2, 256}, Rope{128, 28, 4, 128}}) {
    const at::Tensor f = at::outer(at::arange(T, cuda(at::kFloat)),
                                   1.0 / at::pow(500000.0, at::arange(0, r.hd, 2, cuda(at::kFloat)) / double(r.hd)));
    const at::Tensor c = f.cos(), s = f.sin();
    char name[64];
    std::snprintf(name, sizeof name, "rope hd%ld %ld/%ld%s", static_cast<long>(r.hd), static_cast<long>(r.heads),
                  static_cast<long>(r.kv), r.padded != r.hd ? " pad" : "");
    check(name, {randn({1, T, (r.heads + 2 * r.kv) * r.hd}, at::kBFloat16)}, {"qkv"}, {"q", "k", "v"},
          [&](const auto& in) {
            const auto table = out_dtype(in, at::kFloat);
            auto [q, k, v] = fused::rope_qkv(in[0], c.to(table), s.to(table), r.heads, r.kv, r.padded);
            return std::vector<at::Tensor>{q.transpose(1, 2).contiguous().transpose(1, 2), k, v};
          },
          {1e-2, 1e-2, 1e-2, 1e-2});
  }
  for (const int64_t D : {2048, 2064, 3072, 3200, 3584, 8192}) {
    const std::string n = "add_rms_norm " + std::to_string(D);
    check(n, {randn({T, D}, at::kFloat), randn({T, D}, at::kBFloat16), randn({D}, at::kFloat)}, {"x", "r", "w"},
          {"h", "y"},
          [&](const auto& in) {
            auto [h, y] = fused::add_rms_norm(in[0], in[1], in[2], out_dtype(in, at::kBFloat16), eps);
            return std::vector<at::Tensor>{h, y};
          },
          {1e-5, 1e-2, 1e-2, 1e-2, 1e-2});
  }
  for (const int64_t F : {8192, 8640, 14336, 18944}) {
    check("swiglu " + std::to_string(F), {randn({T, 2 * F}, at::kBFloat16, 2.0)}, {"gu"}, {"out"},
          [&](const auto& in) { return std::vector<at::Tensor>{fused::swiglu(in[0])}; }, {1e-2, 1e-2});
  }
  for (const int64_t V : {32064, 50257, 128256, 152064, 256000}) {
    const int64_t D = 2048;
    const at::Tensor targets = at::randint(0, V, {T}, cuda(at::kLong));
    check("linear_ce " + std::to_string(V), {randn({T, D}, at::kBFloat16), randn({V, D}, at::kFloat, 0.02)}, {"h", "w"},
          {"loss"},
          [&](const auto& in) {
            return std::vector<at::Tensor>{
                fused::linear_cross_entropy(in[0], in[1], targets, out_dtype(in, at::kBFloat16))};
          },
          {1e-3, 1e-2, 1e-2});
  }
}

// kernels::scale_in_place against at::mul by the same device scalar, to the bit: lengths with and
// without a tail of 1-3 elements, the scalar 1 (nothing written), 1/2 (accumulation) and 65536 (a
// loss scale); and a misaligned pointer, which it must refuse.
void check_scale_in_place() {
  double worst = 0;
  bool refused = false;
  for (int64_t n : {int64_t{1}, int64_t{3}, int64_t{4}, int64_t{4097}, (int64_t{1} << 22) + 3})
    for (double s : {1.0, 0.5, 65536.0}) {
      at::Tensor x = at::randn({n + 4}, cuda(at::kFloat)).narrow(0, 0, n);
      const at::Tensor scalar = at::scalar_tensor(s, cuda(at::kFloat));
      const at::Tensor want = x * scalar;
      if (!tunebench::kernels::scale_in_place(x.data_ptr<float>(), n, scalar.data_ptr<float>(),
                                              at::cuda::getCurrentCUDAStream())) {
        worst = INFINITY;
        continue;
      }
      worst = std::max(worst, byte_diff(x, want));
      if (n == 4097 && s == 1.0) {
        at::Tensor y = at::randn({n + 1}, cuda(at::kFloat));
        refused = !tunebench::kernels::scale_in_place(y.data_ptr<float>() + 1, n, scalar.data_ptr<float>(),
                                                      at::cuda::getCurrentCUDAStream());
      }
    }
  row("scale_in_place", "x", worst, 0.0, 0.0);
  row("scale_in_place", "unaligned refused", refused ? 0.0 : 1.0, 0.0, 0.0);
}

// The block's fused residual paths against what they replaced, to the bit (the kernels must not
// change a trial's numbers): residual_add against at::add for each pair of dtypes it takes, and
// with a length it must leave to at::add; rms_norm_keep's x gradient against rms_norm's plus the
// residual gradient added by at::add; linear_residual's output and three gradients against
// r + linear(x, w), at the 7B block's w2 shape.
void check_block_fusions() {
  const at::Tensor h32 = at::randn({2048, 4096}, cuda(at::kFloat));
  double add = 0;
  for (const auto& [h, y] : std::vector<std::pair<at::Tensor, at::Tensor>>{
           {h32, randn({2048, 4096}, at::kBFloat16)},
           {h32, randn({2048, 4096}, at::kHalf)},
           {h32, at::randn({2048, 4096}, cuda(at::kFloat))},
           {randn({2048, 4096}, at::kBFloat16), randn({2048, 4096}, at::kBFloat16)},
           {at::randn({1001}, cuda(at::kFloat)), randn({1001}, at::kBFloat16)}}) {
    poison();
    add = std::max(add, byte_diff(fused::residual_add(h, y), h + y));
  }
  row("residual_add", "out", add, 0.0, 0.0);

  const at::Tensor x = at::randn({1, 2048, 4096}, cuda(at::kFloat)).requires_grad_(true);
  const at::Tensor w = (at::rand({4096}, cuda(at::kFloat)) + 0.5).requires_grad_(true);
  const at::Tensor dy = randn({1, 2048, 4096}, at::kBFloat16), dres = at::randn({1, 2048, 4096}, cuda(at::kFloat));
  poison();
  const auto [xk, y] = fused::rms_norm_keep(x, w, at::kBFloat16, 1e-5);
  const auto gk = torch::autograd::grad({xk, y}, {x, w}, {dres, dy});
  const at::Tensor yr = fused::rms_norm(x, w, at::kBFloat16, 1e-5);
  const auto gr = torch::autograd::grad({yr}, {x, w}, {dy});
  row("rms_norm_keep", "y", byte_diff(y, yr), 0.0, 0.0);
  row("rms_norm_keep", "dx,dw", std::max(byte_diff(gk[0], gr[0] + dres), byte_diff(gk[1], gr[1])), 0.0, 0.0);

  const at::Tensor s = randn({1, 2048, 11008}, at::kBFloat16).requires_grad_(true);
  const at::Tensor w2 = randn({4096, 11008}, at::kFloat, 0.02).requires_grad_(true);
  const at::Tensor r = at::randn({1, 2048, 4096}, cuda(at::kFloat)).requires_grad_(true);
  const at::Tensor dout = at::randn({1, 2048, 4096}, cuda(at::kFloat));
  poison();
  const at::Tensor o = fused::linear_residual(s, w2, r, at::kBFloat16);
  const auto go = torch::autograd::grad({o}, {s, w2, r}, {dout});
  const at::Tensor oref = r + fused::linear(s, w2, at::kBFloat16);
  const auto gref = torch::autograd::grad({oref}, {s, w2, r}, {dout});
  row("linear_residual", "out", byte_diff(o, oref), 0.0, 0.0);
  row("linear_residual", "dx,dw,dr",
      std::max({byte_diff(go[0], gref[0]), byte_diff(go[1], gref[1]), byte_diff(go[2], gref[2])}), 0.0, 0.0);
}

// A tied table's gradient with the lookup's rows sparse (embedding_rows) against at::embedding's
// dense gradient, to the bit, at Llama-3.2-1B's table (128,256 x 2,048, fp32) and 2,048 positions:
// tokens over the whole vocabulary and over 50 (rows summed many times), the head's dense gradient
// the other use. Timed: the two backward passes, which differ in the lookup's part only.
void check_embedding_rows() {
  const int64_t vocab = 128256, dim = 2048;
  const at::Tensor w = (at::randn({vocab, dim}, cuda(at::kFloat)) * 0.02).requires_grad_(true);
  const at::Tensor head_probe = at::randn({vocab, dim}, cuda(at::kFloat));
  const at::Tensor probe = at::randn({1, 2048, dim}, cuda(at::kFloat));
  double worst = 0;
  for (int64_t range : {vocab, int64_t{50}}) {
    const at::Tensor ids = at::randint(0, range, {1, 2048}, cuda(at::kLong));
    const auto grad_of = [&](bool rows) {
      const at::Tensor e = rows ? fused::embedding_rows(w, ids) : at::embedding(w, ids);
      return torch::autograd::grad({(e * probe).sum() + (w * head_probe).sum()}, {w})[0];
    };
    poison();
    worst = std::max(worst, byte_diff(grad_of(true), grad_of(false)));
    if (range == vocab)
      g_timings.push_back(
          {"tied lookup grad", time_ms([&] { grad_of(true); }, 5), time_ms([&] { grad_of(false); }, 5)});
  }
  row("embedding_rows", "tied dw", worst, 0.0, 0.0);
}

// gemm::mm (compile fused's linear layers) against at::mm: the first call of a shape measures the
// algorithms, the later ones run the chosen one, which must give at::mm's bits on any operands, not
// only on those it was chosen with. Three layouts (forward, input gradient, fp32 weight gradient) at
// the 7B's w2 shape and at an odd one; then the time of the 7B shapes' calls both ways.
void check_gemm_search() {
  struct Shape {
    const char* name;
    int64_t tokens, in, out;
  };
  for (const Shape& s : {Shape{"7B w2", 2048, 11008, 4096}, Shape{"odd", 1040, 2064, 1552}}) {
    double worst[3] = {0, 0, 0};
    for (int draw = 0; draw < 3; ++draw) {  // draw 0 meets the shapes (at::mm's call), then they are searched
      const at::Tensor x = randn({s.tokens, s.in}, at::kBFloat16), w = randn({s.out, s.in}, at::kBFloat16, 0.02);
      const at::Tensor dy = randn({s.tokens, s.out}, at::kBFloat16);
      const std::array<std::pair<at::Tensor, at::Tensor>, 3> ops = {std::pair{x, w.t()}, std::pair{dy, w},
                                                                    std::pair{dy.t(), x}};
      for (int i = 0; i < 3; ++i) {
        const at::ScalarType out = i == 2 ? at::kFloat : at::kBFloat16;
        const at::Tensor want =
            out == at::kFloat ? at::mm(ops[i].first, ops[i].second, out) : at::mm(ops[i].first, ops[i].second);
        worst[i] = std::max(worst[i], byte_diff(tunebench::engine::gemm::mm(ops[i].first, ops[i].second, out), want));
      }
      if (draw == 0) tunebench::engine::gemm::search_pending();
    }
    row(std::string("gemm ") + s.name, "y", worst[0], 0.0, 0.0);
    row(std::string("gemm ") + s.name, "dx", worst[1], 0.0, 0.0);
    row(std::string("gemm ") + s.name, "dw fp32", worst[2], 0.0, 0.0);
  }
  // One 7B block's twelve GEMMs (2,048 tokens), at::mm's pick against the chosen algorithms.
  double plain = 0, chosen = 0;
  for (const auto& [in, out] : {std::pair<int64_t, int64_t>{4096, 12288}, {4096, 4096}, {4096, 22016}, {11008, 4096}}) {
    const at::Tensor x = randn({2048, in}, at::kBFloat16), w = randn({out, in}, at::kBFloat16, 0.02);
    const at::Tensor dy = randn({2048, out}, at::kBFloat16);
    const auto searched = [&] {
      (void)tunebench::engine::gemm::mm(x, w.t(), at::kBFloat16);
      (void)tunebench::engine::gemm::mm(dy, w, at::kBFloat16);
      (void)tunebench::engine::gemm::mm(dy.t(), x, at::kFloat);
    };
    searched();  // meets the shapes
    tunebench::engine::gemm::search_pending();
    plain += time_ms([&] {
      (void)at::mm(x, w.t());
      (void)at::mm(dy, w);
      (void)at::mm(dy.t(), x, at::kFloat);
    });
    chosen += time_ms(searched);
  }
  std::printf("gemm 7B block (12 GEMMs): at::mm %.3f ms, gemm::mm %.3f ms (x 32 blocks: %.1f ms a step)\n", plain,
              chosen, 32 * (plain - chosen));
  const auto summary = tunebench::engine::gemm::summary();
  std::printf("%s\n", tunebench::engine::gemm::describe(summary).c_str());
  // The rows above prove nothing if nothing was searched (TUNEBENCH_GEMM=cublas, or a build
  // without cuBLASLt): at least the two checks' 6 shapes and the 7B block's 9 others (its w2 is the
  // first check's); the fused ops checked earlier add theirs.
  row("gemm search", "shapes", summary.shapes >= 15 ? 0.0 : 1.0, 0.0, 0.0);
}

// The project's AdamW kernel (compile fused) against PyTorch's at::_fused_adamw_ on four 7B blocks'
// parameters (0.8 G elements, 28 bytes each per step): the same parameters after three steps, and
// each one's time and bandwidth.
void check_adamw() {
  auto c = tunebench::config::TrialConfig{};
  c.compile = tunebench::config::Compile::Fused;
  c.amp = tunebench::config::Amp::Bf16;
  c.lr = 1e-3;
  c.weight_decay = 0.1;
  std::vector<at::Tensor> params, grads;
  for (int b = 0; b < 4; ++b)
    for (int64_t n : {int64_t{4096}, int64_t{12288} * 4096, int64_t{4096} * 4096, int64_t{4096}, int64_t{22016} * 4096,
                      int64_t{4096} * 11008}) {
      params.push_back(at::randn({n}, cuda(at::kFloat)));
      grads.push_back(at::randn({n}, cuda(at::kFloat)) * 1e-3);
    }
  std::vector<at::Tensor> copy;
  for (const auto& p : params) copy.push_back(p.clone());
  Optimizer torch_adamw(c, copy, /*torch_adamw=*/true);
  Optimizer own(c, params);
  if (!own.own_kernel()) {
    std::printf("adamw: FAIL (the kernel was not taken: %s)\n", own.fallback_reason().c_str());
    g_failed = true;
    return;
  }
  for (int k = 0; k < 3; ++k) {
    own.step(grads);
    torch_adamw.step(grads);
  }
  // A fourth step that also writes each parameter's bf16 copy (compile fused's next-forward weights).
  std::vector<at::Tensor> bf16;
  for (const auto& p : params) bf16.push_back(at::empty(p.sizes(), cuda(at::kBFloat16)));
  if (!own.step(grads, {}, tunebench::engine::WeightCopies(bf16.begin(), bf16.end()))) {
    std::printf("adamw: FAIL (the bf16 copies were not written)\n");
    g_failed = true;
  }
  torch_adamw.step(grads);
  double worst = 0, copies = 0;
  for (size_t i = 0; i < params.size(); ++i) {
    worst = std::max(worst, rel_l2(params[i], copy[i]));
    copies = std::max(copies, rel_l2(bf16[i], params[i].to(at::kBFloat16)));
  }
  row("adamw (4 steps)", "p", worst, 0.0, 1e-6);
  row("adamw bf16 copies", "p", copies, 0.0, 0.0);
  double elements = 0;
  for (const auto& p : params) elements += static_cast<double>(p.numel());
  const double own_ms = time_ms([&] { own.step(grads); }, 5);
  const double torch_ms = time_ms([&] { torch_adamw.step(grads); }, 5);
  std::printf("adamw: %.0f M parameters, Tunebench kernel %.2f ms (%.0f GB/s), at::_fused_adamw_ %.2f ms (%.0f GB/s)\n",
              elements / 1e6, own_ms, elements * 28 / own_ms / 1e6, torch_ms, elements * 28 / torch_ms / 1e6);
  g_timings.push_back({"adamw (4 7B blocks)", own_ms, torch_ms});
}

// Gradients in bf16 (rules::half_weight_grads): the kernel reads a block's matmul weights'
// gradients in bf16 and its norms' in fp32, one launch. The parameters after three steps equal, bit
// for bit, those from the same gradients handed over in fp32; and the pass's time against that.
void check_adamw_bf16_grads() {
  auto c = tunebench::config::TrialConfig{};
  c.compile = tunebench::config::Compile::Fused;
  c.amp = tunebench::config::Amp::Bf16;
  c.lr = 1e-3;
  c.weight_decay = 0.1;
  std::vector<at::Tensor> params, half, full;
  for (int b = 0; b < 4; ++b)
    for (int64_t n : {int64_t{4096}, int64_t{12288} * 4096, int64_t{4096} * 4096, int64_t{4096}, int64_t{22016} * 4096,
                      int64_t{4096} * 11008}) {
      params.push_back(at::randn({n}, cuda(at::kFloat)));
      const at::Tensor g = at::randn({n}, cuda(at::kFloat)) * 1e-3;
      half.push_back(n > 4096 ? g.to(at::kBFloat16) : g);  // the norms keep fp32
      full.push_back(half.back().to(at::kFloat));
    }
  std::vector<at::Tensor> copy;
  for (const auto& p : params) copy.push_back(p.clone());
  Optimizer a(c, params), b(c, copy);
  if (!a.own_kernel() || !b.own_kernel()) {
    std::printf("adamw bf16 grads: FAIL (the kernel was not taken: %s)\n", a.fallback_reason().c_str());
    g_failed = true;
    return;
  }
  for (int k = 0; k < 3; ++k) {
    a.step(half);
    b.step(full);
  }
  double differ = 0;
  for (size_t i = 0; i < params.size(); ++i) differ += params[i].ne(copy[i]).sum().item<double>();
  row("adamw bf16 gradients", "p", differ, 0.0, 0.0);
  const double half_ms = time_ms([&] { a.step(half); }, 5);
  const double full_ms = time_ms([&] { b.step(full); }, 5);
  std::printf("adamw: bf16 matmul gradients %.2f ms, the same in fp32 %.2f ms (4 7B blocks)\n", half_ms, full_ms);
  g_timings.push_back({"adamw bf16 grads", half_ms, full_ms});
}

}  // namespace

int main() {
  if (!at::cuda::is_available()) {
    std::fprintf(stderr, "kernel_check: no CUDA device\n");
    return 2;
  }
  std::setvbuf(stdout, nullptr, _IONBF, 0);  // rows survive a crash of a later check
  // TUNEBENCH_GEMM / TUNEBENCH_GEMM_LOG, as the worker reads them (gpu-bench.sh gemm-search sets them).
  tunebench::engine::gemm::use_switches(tunebench::engine::read_switches());
  at::manual_seed(1234);
  const int64_t T = 2048, D = 4096, F = 11008, H = 32, hd = 128, V = 32000;
  const double eps = 1e-5;
  std::printf("%-22s %-8s %12s %12s %9s\n", "op (7B shapes)", "tensor", "kernel err", "composite", "tolerance");

  // RMSNorm, autocast layout: fp32 stream and weight, bf16 output.
  check("rms_norm fp32->bf16", {randn({T, D}, at::kFloat), randn({D}, at::kFloat)}, {"x", "w"}, {"y"},
        [&](const auto& in) {
          return std::vector<at::Tensor>{fused::rms_norm(in[0], in[1], out_dtype(in, at::kBFloat16), eps)};
        },
        {1e-2, 1e-2, 1e-2});
  check("rms_norm bf16", {randn({T, D}, at::kBFloat16), randn({D}, at::kBFloat16)}, {"x", "w"}, {"y"},
        [&](const auto& in) {
          return std::vector<at::Tensor>{fused::rms_norm(in[0], in[1], out_dtype(in, at::kBFloat16), eps)};
        },
        {1e-2, 1e-2, 1e-2});
  check("rms_norm fp32", {randn({T, D}, at::kFloat), randn({D}, at::kFloat)}, {"x", "w"}, {"y"},
        [&](const auto& in) {
          return std::vector<at::Tensor>{fused::rms_norm(in[0], in[1], out_dtype(in, at::kFloat), eps)};
        },
        {1e-5, 1e-5, 1e-5});
  check("add_rms_norm", {randn({T, D}, at::kFloat), randn({T, D}, at::kBFloat16), randn({D}, at::kFloat)},
        {"x", "r", "w"}, {"h", "y"},
        [&](const auto& in) {
          auto [h, y] = fused::add_rms_norm(in[0], in[1], in[2], out_dtype(in, at::kBFloat16), eps);
          return std::vector<at::Tensor>{h, y};
        },
        {1e-5, 1e-2, 1e-2, 1e-2, 1e-2});
  const at::Tensor freqs = at::outer(at::arange(T, cuda(at::kFloat)),
                                     1.0 / at::pow(10000.0, at::arange(0, hd, 2, cuda(at::kFloat)) / double(hd)));
  const at::Tensor cos = freqs.cos(), sin = freqs.sin();
  check("rope_qkv", {randn({1, T, 3 * H * hd}, at::kBFloat16)}, {"qkv"}, {"q", "k", "v"},
        [&](const auto& in) {
          const auto table = out_dtype(in, at::kFloat);
          auto [q, k, v] = fused::rope_qkv(in[0], cos.to(table), sin.to(table), H, H);
          // SDPA hands back gradients in [B, H, T, hd] layout: feed them that way.
          return std::vector<at::Tensor>{q.transpose(1, 2).contiguous().transpose(1, 2), k, v};
        },
        {1e-2, 1e-2, 1e-2, 1e-2});
  check("swiglu", {randn({T, 2 * F}, at::kBFloat16, 2.0)}, {"gu"}, {"out"},
        [&](const auto& in) { return std::vector<at::Tensor>{fused::swiglu(in[0])}; }, {1e-2, 1e-2});
  check("linear bf16 (fp32 W)", {randn({T, D}, at::kBFloat16), randn({F, D}, at::kFloat, 0.02)}, {"x", "w"}, {"y"},
        [&](const auto& in) {
          return std::vector<at::Tensor>{fused::linear(in[0], in[1], out_dtype(in, at::kBFloat16))};
        },
        {1e-2, 1e-2, 1e-2});
  const at::Tensor targets = at::randint(0, V, {T}, cuda(at::kLong));
  check("linear_cross_entropy", {randn({T, D}, at::kBFloat16), randn({V, D}, at::kFloat, 0.02)}, {"h", "w"}, {"loss"},
        [&](const auto& in) {
          return std::vector<at::Tensor>{
              fused::linear_cross_entropy(in[0], in[1], targets, out_dtype(in, at::kBFloat16))};
        },
        {1e-3, 1e-2, 1e-2});

  check_fp8_linear(T, D, F);

  check_model_shapes();
  check_scale_in_place();
  check_block_fusions();
  check_embedding_rows();
  check_gemm_search();
  check_adamw();
  check_adamw_bf16_grads();
  if (tunebench::engine::fp8_supported(nullptr)) {
    check_gemm_search_fp8();
    check_adamw_fp8();
    check_rms_norm_fp8();
    check_fp8_swiglu_mlp();
    check_fp8_qkv_rope();
  }

  std::printf("\n%-22s %12s %14s %8s\n", "forward+backward", "kernel ms", "composite ms", "speedup");
  for (const auto& t : g_timings)
    std::printf("%-22s %12.3f %14.3f %7.2fx\n", t.op.c_str(), t.kernel_ms, t.composite_ms,
                t.composite_ms / t.kernel_ms);
  std::printf("\nkernel check: %s\n", g_failed ? "FAILED" : "all within tolerance");
  return g_failed ? 1 : 0;
}

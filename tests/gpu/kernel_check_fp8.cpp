// The GPU kernel check's float8 rows (kernel_check.cpp's main runs them where the GPU has float8
// matmuls): the fp8 linear against float64, the float8 GEMM plans, the AdamW that writes float8
// weights, the norm that writes float8, and the two float8 nodes of a block, each against the
// unfused path it replaces, byte for byte.
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <torch/csrc/autograd/autograd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
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
using tunebench::engine::Fp8Linear;
using tunebench::engine::Optimizer;

namespace tunebench::kernel_check {

// float8 matmuls: against the float64 matmul of the same inputs (two steps, so the second one runs
// on delayed scales taken from the first), at the 7B's shapes; then timed against the bf16 linear.
void check_fp8_linear(int64_t T, int64_t D, int64_t F) {
  std::string why;
  if (tunebench::engine::fp8_supported(&why)) try {
      Fp8Linear fp8;
      for (int step = 0; step < 2; ++step) {
        const at::Tensor x = randn({T, D}, at::kBFloat16).requires_grad_(true);
        const at::Tensor w = randn({F, D}, at::kFloat, 0.02).requires_grad_(true);
        const at::Tensor probe = at::randn({T, F}, cuda(at::kFloat));
        poison();
        const at::Tensor y = fp8.forward(x, w);
        const auto g = torch::autograd::grad({(y.to(at::kFloat) * probe).sum()}, {x, w});
        fp8.end_step();
        const at::Tensor xd = x.detach().to(at::kDouble).requires_grad_(true);
        const at::Tensor wd = w.detach().to(at::kDouble).requires_grad_(true);
        const at::Tensor yd = at::linear(xd, wd);
        const auto gd = torch::autograd::grad({(yd * probe.to(at::kDouble)).sum()}, {xd, wd});
        const at::Tensor yb = at::linear(x.detach(), w.detach().to(at::kBFloat16));
        const std::string name = "fp8 linear step " + std::to_string(step + 1);
        row(name, "y", rel_l2(y, yd), rel_l2(yb, yd), 8e-2);
        row(name, "dx", rel_l2(g[0], gd[0]), 0.0, 8e-2);
        row(name, "dw", rel_l2(g[1], gd[1]), 0.0, 8e-2);
      }
      const at::Tensor x = randn({T, D}, at::kBFloat16), w = randn({F, D}, at::kFloat, 0.02);
      const at::Tensor probe = randn({T, F}, at::kBFloat16);
      auto fp8_step = [&] {
        const at::Tensor xi = x.detach().requires_grad_(true), wi = w.detach().requires_grad_(true);
        torch::autograd::backward({fp8.forward(xi, wi)}, {probe});
      };
      auto bf16_step = [&] {
        const at::Tensor xi = x.detach().requires_grad_(true), wi = w.detach().requires_grad_(true);
        torch::autograd::backward({fused::linear(xi, wi, at::kBFloat16)}, {probe});
      };
      g_timings.push_back({"fp8 vs bf16 linear", time_ms(fp8_step), time_ms(bf16_step)});
    } catch (const std::exception& e) {
      std::printf("fp8 linear: FAIL (%s)\n", std::string(e.what()).substr(0, 300).c_str());
      g_failed = true;
    }
  else {
    std::printf("fp8: skipped (%s)\n", why.c_str());
  }
}

// The float8 products the fp8 linears make (gemm::scaled_mm) against at::_scaled_mm, byte for byte:
// the 7B block's w13 forward (e4m3 x e4m3, fast accumulation, bf16 out), input gradient (e5m2 x
// e4m3, bf16) and weight gradient (e5m2 x e4m3, fp32 out), on operands and scales drawn after the
// search, which for these shapes keeps a cuBLASLt plan when one gives _scaled_mm's bits.
void check_gemm_search_fp8() {
#if TUNEBENCH_TORCH_AT_LEAST(2, 1)
  namespace gemm = tunebench::engine::gemm;
  const int64_t T = 2048, D = 4096, F2 = 22016;
  double worst[3] = {0, 0, 0};
  const auto f8 = [](const at::Tensor& t, at::ScalarType type) { return t.to(type); };
  for (int draw = 0; draw < 3; ++draw) {  // draw 0 meets the shapes, then they are searched
    const at::Tensor x8 = f8(randn({T, D}, at::kFloat), at::kFloat8_e4m3fn);
    const at::Tensor w8 = f8(randn({F2, D}, at::kFloat), at::kFloat8_e4m3fn);
    const at::Tensor w8t = w8.t().contiguous(), x8t = x8.t().contiguous();
    const at::Tensor dy8 = f8(randn({T, F2}, at::kFloat), at::kFloat8_e5m2), dy8t = dy8.t().contiguous();
    const at::Tensor sa = at::full({1}, 0.01 * (draw + 1), cuda(at::kFloat)), sb = at::full({1}, 0.7, cuda(at::kFloat));
    struct Product {
      at::Tensor a, b;
      at::ScalarType out;
      bool fast;
    };
    const std::array<Product, 3> ops = {Product{x8, w8.t(), at::kBFloat16, true},
                                        Product{dy8, w8t.t(), at::kBFloat16, false},
                                        Product{dy8t, x8t.t(), at::kFloat, false}};
    for (int i = 0; i < 3; ++i) {
      const at::Tensor want =
          at::_scaled_mm(ops[i].a, ops[i].b, sa, sb, std::nullopt, std::nullopt, ops[i].out, ops[i].fast);
      worst[i] =
          std::max(worst[i], byte_diff(gemm::scaled_mm(ops[i].a, ops[i].b, sa, sb, ops[i].out, ops[i].fast), want));
    }
    if (draw == 0) gemm::search_pending();
  }
  row("gemm fp8 7B w13", "y", worst[0], 0.0, 0.0);
  row("gemm fp8 7B w13", "dx", worst[1], 0.0, 0.0);
  row("gemm fp8 7B w13", "dw fp32", worst[2], 0.0, 0.0);
#endif
}

// The AdamW kernel that also writes a float8 linear's next weights (amp fp8 with compile fused)
// against the plain kernel followed by the forward's own cast of the updated weight: the same
// parameters, moments, float8 bytes in both layouts, scale and amax, to the bit. Shapes: a 7B
// block's four weights, Llama-3.2-1B's and hd80's projections, and one that is no multiple of the
// 64x64 tile. Then the time of both updates over the 7B weights.
void check_adamw_fp8() {
  using tunebench::engine::WeightCopies;
  auto c = tunebench::config::TrialConfig{};
  c.compile = tunebench::config::Compile::Fused;
  c.amp = tunebench::config::Amp::Fp8;
  c.lr = 1e-3;
  c.weight_decay = 0.1;
  const std::vector<std::pair<int64_t, int64_t>> shapes = {{12288, 4096}, {4096, 4096}, {22016, 4096}, {4096, 11008},
                                                           {3072, 2048},  {3840, 2560}, {2560, 6912},  {1040, 2064}};
  std::vector<at::Tensor> pa, pb, grads;
  std::vector<std::unique_ptr<Fp8Linear>> linears;
  for (const auto& [rows, cols] : shapes) {
    pa.push_back(at::randn({rows, cols}, cuda(at::kFloat)) * 0.02);
    pb.push_back(pa.back().clone());
    grads.push_back(at::randn({rows, cols}, cuda(at::kFloat)) * 1e-3);
    linears.push_back(std::make_unique<Fp8Linear>());
    linears.back()->forward(at::randn({16, cols}, cuda(at::kBFloat16)), pb.back());  // creates the scaling state
    linears.back()->end_step();  // the weight's amax becomes its history, as after a training step
  }
  Optimizer plain(c, pa), with_copies(c, pb);
  if (!plain.own_kernel() || !with_copies.own_kernel()) {
    std::printf("adamw fp8: FAIL (the kernel was not taken: %s)\n", plain.fallback_reason().c_str());
    g_failed = true;
    return;
  }
  for (int k = 0; k < 2; ++k) {  // the moments too must stay equal from step to step
    WeightCopies copies;
    for (size_t i = 0; i < shapes.size(); ++i) copies.push_back(linears[i]->new_weight_copy(pb[i]));
    plain.step(grads);
    if (!with_copies.step(grads, {}, copies)) {
      std::printf("adamw fp8: FAIL (the float8 copies were not written)\n");
      g_failed = true;
      return;
    }
    double p_diff = 0, q_diff = 0, qt_diff = 0, scale_diff = 0, amax_diff = 0;
    for (size_t i = 0; i < shapes.size(); ++i) {
      const auto [rows, cols] = shapes[i];
      auto& l = *linears[i];
      p_diff = std::max(p_diff, (pa[i] - pb[i]).abs().max().item<double>());
      // The forward's cast of the plain update, with the same history, into fresh slots.
      at::Tensor hist = l.amax_history.narrow(0, 4, 1).clone(), cur = at::zeros({1}, cuda(at::kFloat)),
                 inv = at::zeros({1}, cuda(at::kFloat));
      at::Tensor q = at::empty({rows, cols}, cuda(at::kByte)), qt = at::empty({cols, rows}, cuda(at::kByte));
      tunebench::kernels::fp8_cast(tunebench::kernels::ElemType::F32, tunebench::kernels::Fp8Kind::E4M3,
                                   pa[i].data_ptr(), rows, cols, hist.data_ptr<float>(), cur.data_ptr<float>(),
                                   inv.data_ptr<float>(), q.data_ptr(), qt.data_ptr(),
                                   at::cuda::getCurrentCUDAStream());
      q_diff = std::max(q_diff, byte_diff(copies[i].fp8, q));
      qt_diff = std::max(qt_diff, byte_diff(copies[i].fp8_t, qt));
      scale_diff = std::max(scale_diff, (l.inv_scale.narrow(0, 4, 1) - inv).abs().item<double>());
      // The kernel raised the current amax to the update's; the forward's cast of step 0 had
      // recorded the old weight's, rolled away by end_step.
      amax_diff = std::max(amax_diff, (l.amax_current.narrow(0, 4, 1) - cur).abs().item<double>());
      l.end_step();
    }
    const std::string step = " step " + std::to_string(k + 1);
    row("adamw fp8" + step, "p", p_diff, 0.0, 0.0);
    row("adamw fp8" + step, "w8", q_diff, 0.0, 0.0);
    row("adamw fp8" + step, "w8^T", qt_diff, 0.0, 0.0);
    row("adamw fp8" + step, "1/scale", scale_diff, 0.0, 0.0);
    row("adamw fp8" + step, "amax", amax_diff, 0.0, 0.0);
  }
  // Time over the 7B block's four weights: the plain update, and the update writing both casts.
  std::vector<at::Tensor> big_a(pa.begin(), pa.begin() + 4), big_g(grads.begin(), grads.begin() + 4),
      big_b(pb.begin(), pb.begin() + 4);
  Optimizer t_plain(c, big_a), t_copies(c, big_b);
  double elements = 0;
  for (const auto& p : big_a) elements += static_cast<double>(p.numel());
  const double plain_ms = time_ms([&] { t_plain.step(big_g); }, 10);
  const double copies_ms = time_ms(
      [&] {
        WeightCopies copies;
        for (size_t i = 0; i < 4; ++i) copies.push_back(linears[i]->new_weight_copy(big_b[i]));
        t_copies.step(big_g, {}, copies);
      },
      10);
  std::printf("adamw fp8: %.0f M parameters, plain %.2f ms (%.0f GB/s), writing the float8 casts %.2f ms (%.0f GB/s)\n",
              elements / 1e6, plain_ms, elements * 28 / plain_ms / 1e6, copies_ms, elements * 30 / copies_ms / 1e6);
  g_timings.push_back({"adamw + fp8 casts (7B block)", copies_ms, plain_ms});
}

// kernels::rms_norm_fp8 against rms_norm_forward followed by fp8_cast of its bf16 y: h, rstd, both
// float8 layouts, the amax and 1/scale byte for byte, with and without the residual add, on the
// models' widths (one to four chunks a thread, a partly filled last chunk; 8192: the largest it
// takes, 128 KB of shared memory), fp32 and bf16 streams, and a refused width; then timed against
// the two kernels on Llama-3.2-1B's and the 7B's shapes.
void check_rms_norm_fp8() {
  namespace k = tunebench::kernels;
  struct Shape {
    int64_t rows, cols;
    bool residual, bf16;  // bf16: x, w and h in bf16 (pure bf16, FSDP's gathered units); else fp32
  };
  const std::vector<Shape> shapes = {{2048, 2048, false, false}, {2048, 2048, true, false},  {2048, 4096, true, false},
                                     {4096, 3072, false, false}, {1024, 256, true, false},   {2064, 1040, true, false},
                                     {512, 8192, true, false},   {2048, 2560, false, false}, {2048, 5120, true, false},
                                     {2048, 4112, false, false}, {2048, 2048, true, true},   {1024, 4096, false, true}};
  const auto stream = at::cuda::getCurrentCUDAStream();
  for (const auto& [rows, cols, residual, bf16] : shapes) {
    const at::ScalarType xt = bf16 ? at::kBFloat16 : at::kFloat;
    const k::ElemType tx = bf16 ? k::ElemType::BF16 : k::ElemType::F32;
    const at::Tensor x = randn({rows, cols}, xt), r = randn({rows, cols}, at::kBFloat16), w = randn({cols}, xt);
    struct Out {
      at::Tensor h, rstd, q, qt, hist, cur, inv;
    };
    const auto fresh = [&] {
      Out o{at::empty({rows, cols}, cuda(xt)),        at::empty({rows}, cuda(at::kFloat)),
            at::empty({rows, cols}, cuda(at::kByte)), at::empty({cols, rows}, cuda(at::kByte)),
            at::full({1}, 3.5f, cuda(at::kFloat)),    at::zeros({1}, cuda(at::kFloat)),
            at::zeros({1}, cuda(at::kFloat))};
      return o;
    };
    const void* rp = residual ? r.data_ptr() : nullptr;
    poison();  // what a kernel leaves unwritten reads as NaN
    Out a = fresh(), b = fresh();
    at::Tensor y = at::empty({rows, cols}, cuda(at::kBFloat16));
    const auto two_kernels = [&] {
      k::rms_norm_forward(tx, tx, k::ElemType::BF16, x.data_ptr(), rp, w.data_ptr(),
                          residual ? a.h.data_ptr() : nullptr, y.data_ptr(), a.rstd.data_ptr<float>(), rows, cols,
                          1e-5f, stream);
      k::fp8_cast(k::ElemType::BF16, k::Fp8Kind::E4M3, y.data_ptr(), rows, cols, a.hist.data_ptr<float>(),
                  a.cur.data_ptr<float>(), a.inv.data_ptr<float>(), a.q.data_ptr(), a.qt.data_ptr(), stream);
    };
    const auto one_kernel = [&] {
      return k::rms_norm_fp8(tx, tx, k::ElemType::BF16, x.data_ptr(), rp, w.data_ptr(),
                             residual ? b.h.data_ptr() : nullptr, b.rstd.data_ptr<float>(), rows, cols, 1e-5f,
                             b.hist.data_ptr<float>(), b.cur.data_ptr<float>(), b.inv.data_ptr<float>(), b.q.data_ptr(),
                             b.qt.data_ptr(), stream);
    };
    const std::string name = "rms_norm fp8 " + std::to_string(rows) + "x" + std::to_string(cols) +
                             (residual ? "+r" : "") + (bf16 ? " bf16" : "");
    two_kernels();
    const bool took = one_kernel();
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    if (!took) {
      std::printf("%s: FAIL (the kernel refused a shape it takes)\n", name.c_str());
      g_failed = true;
      continue;
    }
    double worst = std::max({byte_diff(a.rstd, b.rstd), byte_diff(a.q, b.q), byte_diff(a.qt, b.qt)});
    if (residual) worst = std::max(worst, byte_diff(a.h, b.h));
    row(name, "h,rstd,q,qT", worst, 0.0, 0.0);
    row(name, "amax,1/s", std::max(byte_diff(a.cur, b.cur), byte_diff(a.inv, b.inv)), 0.0, 0.0);
    if (!bf16 && ((rows == 2048 && cols == 2048) || cols == 4096))
      g_timings.push_back({name, time_ms([&] { one_kernel(); }), time_ms(two_kernels)});
  }
  // A width above 8192 is refused (the caller then runs the two kernels).
  const at::Tensor x = randn({16, 8208}, at::kFloat), w = randn({8208}, at::kFloat);
  at::Tensor scratch = at::zeros({4}, cuda(at::kFloat)), q = at::empty({16, 8208}, cuda(at::kByte)),
             qt = at::empty({8208, 16}, cuda(at::kByte)), rs = at::empty({16}, cuda(at::kFloat));
  const bool took = k::rms_norm_fp8(k::ElemType::F32, k::ElemType::F32, k::ElemType::BF16, x.data_ptr(), nullptr,
                                    w.data_ptr(), nullptr, rs.data_ptr<float>(), 16, 8208, 1e-5f,
                                    scratch.data_ptr<float>(), scratch.data_ptr<float>() + 1,
                                    scratch.data_ptr<float>() + 2, q.data_ptr(), qt.data_ptr(), stream);
  row("rms_norm fp8 16x8208", "refused", took ? 1.0 : 0.0, 0.0, 0.0);
  // The plain norm's kernels take up to four chunks a thread (8192) too: wider rows run the
  // composite path, whose values a kernel-enabled call must then give (it once claimed the launch).
  const at::Tensor r = randn({16, 8208}, at::kBFloat16);
  const auto both = [&](bool kernels) {
    fused::set_kernels_enabled(kernels);
    const auto [h, y] = fused::add_rms_norm(x, r, w, at::kBFloat16, 1e-5);
    fused::set_kernels_enabled(true);
    return std::pair{h, y};
  };
  poison();
  const auto [h1, y1] = both(true);
  const auto [h0, y0] = both(false);
  row("add_rms_norm 16x8208", "h,y", std::max(byte_diff(h1, h0), byte_diff(y1, y0)), 0.0, 0.0);
}

// fp8_norm_swiglu_mlp against the same block half as fused::add_rms_norm, then the residual plus
// two Fp8Linear nodes around fused::swiglu: the output, the five gradients (x, r, the norm's weight,
// w13, w2) and both linears' scales and amax bit for bit, over three steps (the first measures each
// amax from the 16-bit tensors; the next two run the kernels that write float8: the norm's, SwiGLU's
// and the cast from the fp32 residual gradient), on the 7B's and other models' feed-forward shapes,
// and one width the norm's float8 kernel does not take (8208: its two-kernel path inside the node).
void check_fp8_swiglu_mlp() {
  using tunebench::engine::fp8_norm_swiglu_mlp;
  const double eps = 1e-5;
  const std::vector<std::array<int64_t, 3>> shapes = {{2048, 4096, 11008}, {2048, 2048, 8192}, {2048, 2560, 6912},
                                                      {1024, 3584, 9728},  {2064, 1040, 2064}, {64, 8208, 512}};
  for (const auto& [T, D, F] : shapes) {
    Fp8Linear up_a, down_a, up_b, down_b;
    const at::Tensor w13 = randn({2 * F, D}, at::kFloat, 0.02), w2 = randn({D, F}, at::kFloat, 0.02),
                     nw = randn({D}, at::kFloat);
    const auto half = [&](bool one_node, const std::vector<at::Tensor>& in) {
      if (one_node) return fp8_norm_swiglu_mlp(in[0], in[1], in[2], eps, at::kBFloat16, in[3], in[4], up_b, down_b);
      const auto [h, n] = fused::add_rms_norm(in[0], in[1], in[2], at::kBFloat16, eps);
      return h + down_a.forward(fused::swiglu(up_a.forward(n, in[3])), in[4]);
    };
    double worst = 0, state = 0;
    for (int step = 0; step < 3; ++step) {
      const at::Tensor x = randn({T, D}, at::kFloat), r = randn({T, D}, at::kBFloat16),
                       probe = randn({T, D}, at::kFloat);
      const auto run = [&](bool one_node) {
        std::vector<at::Tensor> in;
        for (const at::Tensor& t : {x, r, nw, w13, w2}) in.push_back(t.detach().requires_grad_(true));
        poison();
        const at::Tensor y = half(one_node, in);
        auto g = torch::autograd::grad({y}, in, {probe});
        g.insert(g.begin(), y.detach());
        return g;
      };
      const auto a = run(false), b = run(true);
      for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, byte_diff(a[i], b[i]));
      for (auto [la, lb] : {std::pair{&up_a, &up_b}, std::pair{&down_a, &down_b}}) {
        state = std::max(state, byte_diff(la->amax_current, lb->amax_current));
        state = std::max(state, byte_diff(la->inv_scale, lb->inv_scale));
        la->end_step();
        lb->end_step();
      }
    }
    const std::string name = "fp8 norm+mlp " + std::to_string(D) + "/" + std::to_string(F);
    row(name, "y,dx,dr,dnw,dw", worst, 0.0, 0.0);
    row(name, "scales", state, 0.0, 0.0);
    if (D == 4096 || D == 2048) {  // time the block half, forward and backward
      const at::Tensor x = randn({T, D}, at::kFloat), r = randn({T, D}, at::kBFloat16),
                       probe = randn({T, D}, at::kFloat);
      const auto step = [&](bool one_node) {
        std::vector<at::Tensor> in;
        for (const at::Tensor& t : {x, r, nw, w13, w2}) in.push_back(t.detach().requires_grad_(true));
        torch::autograd::backward({half(one_node, in)}, {probe});
      };
      g_timings.push_back(
          {"fp8 norm+mlp " + std::to_string(D), time_ms([&] { step(true); }), time_ms([&] { step(false); })});
    }
  }
}

// fp8_norm_qkv_rope against fused::rms_norm_keep, Fp8Linear and fused::rope_qkv: the residual
// stream passed through, q, k, v, the gradients of x, the norm's weight and w, and the linear's
// scales and amax bit for bit over three steps, the gradients of q, k and v handed over strided as
// SDPA's are and the residual stream's gradient coming back to the node; head sizes 128, 64 (4:1
// grouping), 96, 80 (4:1) and 100 (padded to 104, which the float8 rotation does not take: the
// two-kernel path inside the node).
void check_fp8_qkv_rope() {
  using tunebench::engine::fp8_norm_qkv_rope;
  const double eps = 1e-5;
  struct Shape {
    int64_t T, D, heads, kv_heads, hdp;
  };
  const std::vector<Shape> shapes = {{2048, 4096, 32, 32, 128},
                                     {2048, 2048, 32, 8, 64},
                                     {2048, 3072, 32, 32, 96},
                                     {2048, 2560, 32, 8, 80},
                                     {2048, 3200, 32, 32, 104}};
  for (const auto& sh : shapes) {
    const int64_t hd = sh.D / sh.heads, width = (sh.heads + 2 * sh.kv_heads) * hd;
    const at::Tensor freqs = at::outer(at::arange(sh.T, cuda(at::kFloat)),
                                       1.0 / at::pow(500000.0, at::arange(0, hd, 2, cuda(at::kFloat)) / double(hd)));
    const at::Tensor cos = freqs.cos(), sin = freqs.sin();
    Fp8Linear a, b;
    const at::Tensor w = randn({width, sh.D}, at::kFloat, 0.02), nw = randn({sh.D}, at::kFloat);
    double worst = 0, state = 0;
    for (int step = 0; step < 3; ++step) {
      const at::Tensor x = randn({1, sh.T, sh.D}, at::kFloat), dres = randn({1, sh.T, sh.D}, at::kFloat);
      // Output gradients laid out as SDPA returns them: [B, heads, T, hdp] seen as [B, T, heads, hdp].
      const std::vector<at::Tensor> probes = {dres, randn({1, sh.heads, sh.T, sh.hdp}, at::kBFloat16).transpose(1, 2),
                                              randn({1, sh.kv_heads, sh.T, sh.hdp}, at::kBFloat16).transpose(1, 2),
                                              randn({1, sh.kv_heads, sh.T, sh.hdp}, at::kBFloat16).transpose(1, 2)};
      const auto run = [&](bool one_node) {
        const at::Tensor xi = x.detach().requires_grad_(true), nwi = nw.detach().requires_grad_(true),
                         wi = w.detach().requires_grad_(true);
        poison();
        at::Tensor xr, q, k, v;
        if (one_node) {
          std::tie(xr, q, k, v) =
              fp8_norm_qkv_rope(xi, nwi, eps, at::kBFloat16, wi, cos, sin, sh.heads, sh.kv_heads, sh.hdp, b);
        } else {
          at::Tensor n;
          std::tie(xr, n) = fused::rms_norm_keep(xi, nwi, at::kBFloat16, eps);
          std::tie(q, k, v) = fused::rope_qkv(a.forward(n, wi), cos, sin, sh.heads, sh.kv_heads, sh.hdp);
        }
        const auto g = torch::autograd::grad({xr, q, k, v}, {xi, nwi, wi}, probes);
        return std::vector<at::Tensor>{xr.detach(), q.detach(), k.detach(), v.detach(), g[0], g[1], g[2]};
      };
      const auto ra = run(false), rb = run(true);
      for (size_t i = 0; i < ra.size(); ++i) worst = std::max(worst, byte_diff(ra[i], rb[i]));
      state = std::max({state, byte_diff(a.amax_current, b.amax_current), byte_diff(a.inv_scale, b.inv_scale)});
      a.end_step();
      b.end_step();
    }
    const std::string name = "fp8 norm+qkv hd " + std::to_string(hd);
    row(name, "x,q,k,v,d*", worst, 0.0, 0.0);
    row(name, "scales", state, 0.0, 0.0);
  }
}

}  // namespace tunebench::kernel_check

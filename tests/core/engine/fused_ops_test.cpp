// The fused ops' hand-written backward formulas against autograd through the composite ops they
// replace. On the CPU the fused ops run their ATen reference implementation, so these tests check
// the math that the CUDA kernels implement (the GPU check compares kernels with the same
// references on the device: app/kernel_check, docs/BENCHMARKS.md).
#include <gtest/gtest.h>

#include <torch/csrc/autograd/autograd.h>

#include "core/engine/kernels/fused_ops.h"

namespace fused = tunebench::engine::fused;

namespace {

constexpr double kEps = 1e-5;

at::Tensor leaf(at::IntArrayRef sizes, at::ScalarType dtype = at::kFloat, double scale = 1.0) {
  return (at::randn(sizes, at::TensorOptions().dtype(at::kDouble)) * scale).to(dtype).requires_grad_(true);
}

// Gradients of sum(out * probe) with respect to `inputs`.
std::vector<at::Tensor> grads(const std::vector<at::Tensor>& outs, const std::vector<at::Tensor>& probes,
                              const std::vector<at::Tensor>& inputs) {
  at::Tensor total = at::zeros({}, at::kDouble);
  for (size_t i = 0; i < outs.size(); ++i) total = total + (outs[i].to(at::kDouble) * probes[i]).sum();
  return torch::autograd::grad({total}, inputs);
}

double rel(const at::Tensor& a, const at::Tensor& b) {
  const double scale = b.to(at::kDouble).abs().max().item<double>() + 1e-12;
  return (a.to(at::kDouble) - b.to(at::kDouble)).abs().max().item<double>() / scale;
}

at::Tensor composite_norm(const at::Tensor& x, const at::Tensor& w) {
  const at::Tensor xf = x.to(at::kFloat);
  return w * (xf * at::rsqrt(xf.pow(2).mean(-1, true) + kEps)).to(x.scalar_type());
}

}  // namespace

TEST(FusedOps, RmsNormMatchesCompositeForwardAndBackward) {
  at::manual_seed(1);
  const at::Tensor x = leaf({3, 5, 24}), w = leaf({24});
  const at::Tensor probe = at::randn({3, 5, 24}, at::kDouble);
  const at::Tensor y = fused::rms_norm(x, w, at::kFloat, kEps);
  const at::Tensor ref = composite_norm(x, w);
  EXPECT_LT(rel(y, ref), 1e-6);
  const auto g = grads({y}, {probe}, {x, w});
  const auto gr = grads({ref}, {probe}, {x, w});
  EXPECT_LT(rel(g[0], gr[0]), 1e-5);
  EXPECT_LT(rel(g[1], gr[1]), 1e-5);
}

TEST(FusedOps, AddRmsNormReturnsTheSumAndItsNormWithBothGradients) {
  at::manual_seed(2);
  const at::Tensor x = leaf({2, 7, 16}), r = leaf({2, 7, 16}), w = leaf({16});
  const at::Tensor ph = at::randn({2, 7, 16}, at::kDouble), py = at::randn({2, 7, 16}, at::kDouble);
  const auto [h, y] = fused::add_rms_norm(x, r, w, at::kFloat, kEps);
  const at::Tensor href = x + r;
  const at::Tensor yref = composite_norm(href, w);
  EXPECT_LT(rel(h, href), 1e-7);
  EXPECT_LT(rel(y, yref), 1e-6);
  const auto g = grads({h, y}, {ph, py}, {x, r, w});
  const auto gr = grads({href, yref}, {ph, py}, {x, r, w});
  for (size_t i = 0; i < 3; ++i) EXPECT_LT(rel(g[i], gr[i]), 1e-5) << "input " << i;
}

TEST(FusedOps, AddRmsNormInMixedPrecisionGivesEachInputItsDtype) {
  // Autocast's layout: fp32 residual stream, bf16 branch output, bf16 result for the next matmul.
  at::manual_seed(3);
  const at::Tensor x = leaf({4, 32}), r = leaf({4, 32}, at::kBFloat16), w = leaf({32});
  const auto [h, y] = fused::add_rms_norm(x, r, w, at::kBFloat16, kEps);
  EXPECT_EQ(h.scalar_type(), at::kFloat);
  EXPECT_EQ(y.scalar_type(), at::kBFloat16);
  const auto g = grads({h, y}, {at::ones({4, 32}, at::kDouble), at::ones({4, 32}, at::kDouble)}, {x, r, w});
  EXPECT_EQ(g[0].scalar_type(), at::kFloat);
  EXPECT_EQ(g[1].scalar_type(), at::kBFloat16);
  EXPECT_EQ(g[2].scalar_type(), at::kFloat);
  EXPECT_LT(rel(y, composite_norm(x + r.to(at::kFloat), w)), 1e-2);  // bf16 rounding of the output
}

TEST(FusedOps, RmsNormKeepPassesXThroughAndAddsItsGradientToTheNorms) {
  // A block's first norm: x goes on to the residual add, and the gradient coming back that way is
  // added to the norm's by this node's backward (autograd no longer sums the two gradients of x).
  at::manual_seed(11);
  const at::Tensor x = leaf({2, 6, 24}), w = leaf({24}), r = leaf({2, 6, 24});
  const at::Tensor ph = at::randn({2, 6, 24}, at::kDouble), py = at::randn({2, 6, 24}, at::kDouble);
  const auto [xk, y] = fused::rms_norm_keep(x, w, at::kFloat, kEps);
  EXPECT_TRUE(at::equal(xk, x));
  EXPECT_LT(rel(y, composite_norm(x, w)), 1e-6);
  // x feeds the next op along both paths, as in the block (h = x + r).
  const at::Tensor h = xk + r, href = x + r;
  const auto g = grads({h, y}, {ph, py}, {x, w, r});
  const auto gr = grads({href, composite_norm(x, w)}, {ph, py}, {x, w, r});
  for (size_t i = 0; i < 3; ++i) EXPECT_LT(rel(g[i], gr[i]), 1e-5) << "input " << i;
  // Without a gradient along the passed-through x, the norm's gradient alone.
  const auto [xk2, y2] = fused::rms_norm_keep(x, w, at::kFloat, kEps);
  const auto gy = grads({y2}, {py}, {x});
  const auto gyr = grads({composite_norm(x, w)}, {py}, {x});
  EXPECT_LT(rel(gy[0], gyr[0]), 1e-5);
}

TEST(FusedOps, LinearResidualIsTheResidualPlusTheMatmulWithEachGradient) {
  at::manual_seed(12);
  const at::Tensor x = leaf({4, 3, 16}), w = leaf({12, 16}), r = leaf({4, 3, 12});
  const at::Tensor probe = at::randn({4, 3, 12}, at::kDouble);
  const at::Tensor y = fused::linear_residual(x, w, r, at::kFloat);
  const at::Tensor ref = r + at::linear(x, w);
  EXPECT_LT(rel(y, ref), 1e-6);
  const auto g = grads({y}, {probe}, {x, w, r});
  const auto gr = grads({ref}, {probe}, {x, w, r});
  for (size_t i = 0; i < 3; ++i) EXPECT_LT(rel(g[i], gr[i]), 1e-5) << "input " << i;
  // Autocast's layout: bf16 matmul, fp32 residual stream and master weight. The sum is the
  // residual's dtype, and equals what the block's plain add gave: r + bf16(x @ w^T), to the bit.
  const at::Tensor yb = fused::linear_residual(x, w, r, at::kBFloat16);
  EXPECT_EQ(yb.scalar_type(), at::kFloat);
  EXPECT_TRUE(at::equal(yb, r + fused::linear(x, w, at::kBFloat16)));
  const auto gb = grads({yb}, {probe}, {x, w, r});
  EXPECT_EQ(gb[1].scalar_type(), at::kFloat);
  EXPECT_EQ(gb[2].scalar_type(), at::kFloat);
  EXPECT_TRUE(at::equal(gb[2], probe.to(at::kFloat)));  // the residual's gradient is the output's
}

TEST(FusedOps, ResidualAddKeepsTheResidualsDtype) {
  const at::Tensor h = at::randn({3, 8}), y = at::randn({3, 8}).to(at::kBFloat16);
  const at::Tensor out = fused::residual_add(h, y);
  EXPECT_EQ(out.scalar_type(), at::kFloat);
  EXPECT_TRUE(at::equal(out, h + y));
}

TEST(FusedOps, EmbeddingRowsGivesTheDenseGradientBitForBitWhereASecondUseIsDense) {
  // A tied head: the table's second use gives a dense gradient, and the lookup's sparse rows are
  // added to it. Repeated tokens make the order of the sums matter.
  at::manual_seed(3);
  const at::Tensor w = leaf({50, 8});
  const at::Tensor ids = at::randint(0, 12, {3, 20}, at::kLong);  // 60 positions over 12 tokens at most
  const at::Tensor probe = at::randn({3, 20, 8}, at::kDouble), head_probe = at::randn({50, 8});
  const auto total = [&](const at::Tensor& looked_up) {
    return (looked_up.to(at::kDouble) * probe).sum() + (w * head_probe).sum().to(at::kDouble);
  };
  const at::Tensor dense = torch::autograd::grad({total(at::embedding(w, ids))}, {w})[0];
  const at::Tensor out = fused::embedding_rows(w, ids);
  EXPECT_TRUE(at::equal(out, at::embedding(w, ids)));
  const at::Tensor rows = torch::autograd::grad({total(out)}, {w})[0];
  ASSERT_FALSE(rows.is_sparse()) << "summed with the dense use, the gradient is dense";
  EXPECT_TRUE(at::equal(rows, dense));
}

TEST(FusedOps, EmbeddingRowsAloneIsTheBatchsDistinctTokensRows) {
  at::manual_seed(4);
  const at::Tensor w = leaf({30, 4});
  const at::Tensor ids = at::tensor({7, 2, 7, 29, 2, 7}, at::kLong).reshape({2, 3});
  const at::Tensor probe = at::randn({2, 3, 4});
  const at::Tensor g = torch::autograd::grad({(fused::embedding_rows(w, ids) * probe).sum()}, {w})[0];
  ASSERT_TRUE(g.is_sparse());
  EXPECT_TRUE(g.is_coalesced());
  EXPECT_TRUE(at::equal(g._indices(), at::tensor({2, 7, 29}, at::kLong).reshape({1, 3})));
  const at::Tensor dense = torch::autograd::grad({(at::embedding(w, ids) * probe).sum()}, {w})[0];
  EXPECT_TRUE(at::equal(g.to_dense(), dense));
}

TEST(FusedOps, RopeQkvRotatesQAndKAndCopiesV) {
  at::manual_seed(4);
  const int64_t B = 2, T = 6, H = 3, hd = 8;
  const at::Tensor qkv = leaf({B, T, 3 * H * hd});
  const at::Tensor freqs = at::outer(at::arange(T, at::kFloat), at::rand({hd / 2}));
  const at::Tensor cos = freqs.cos(), sin = freqs.sin();
  const auto [q, k, v] = fused::rope_qkv(qkv, cos, sin, H, H);
  const auto parts = qkv.view({B, T, 3, H, hd}).unbind(2);
  const at::Tensor qr = fused::rotate_pairs(parts[0], cos, sin), kr = fused::rotate_pairs(parts[1], cos, sin);
  EXPECT_LT(rel(q, qr), 1e-7);
  EXPECT_LT(rel(k, kr), 1e-7);
  EXPECT_LT(rel(v, parts[2]), 1e-7);
  EXPECT_NE(v.data_ptr(), qkv.data_ptr());
  // a rotation, not the identity: q differs from its input
  EXPECT_GT(rel(q, parts[0]), 1e-2);
  std::vector<at::Tensor> probes;
  for (int i = 0; i < 3; ++i) probes.push_back(at::randn({B, T, H, hd}, at::kDouble));
  // Gradients that arrive transposed, as SDPA's do.
  const auto g = grads({q.transpose(1, 2).contiguous().transpose(1, 2), k, v}, probes, {qkv});
  const auto gr = grads({qr, kr, parts[2]}, probes, {qkv});
  EXPECT_LT(rel(g[0], gr[0]), 1e-5);
}

TEST(FusedOps, RopeQkvSplitsGroupedQueryHeadsAndPadsTheHeadSize) {
  // Grouped-query attention (4 query heads, 2 key/value heads) of head size 10, padded to 16 as
  // flash attention needs: the padding is zeros, the rest is the rotation of the unpadded split.
  at::manual_seed(5);
  const int64_t B = 2, T = 5, H = 4, KV = 2, hd = 10, hdp = 16;
  const at::Tensor qkv = leaf({B, T, (H + 2 * KV) * hd});
  const at::Tensor freqs = at::outer(at::arange(T, at::kFloat), at::rand({hd / 2}));
  const at::Tensor cos = freqs.cos(), sin = freqs.sin();
  const auto [q, k, v] = fused::rope_qkv(qkv, cos, sin, H, KV, hdp);
  ASSERT_EQ(q.sizes(), (std::vector<int64_t>{B, T, H, hdp}));
  ASSERT_EQ(k.sizes(), (std::vector<int64_t>{B, T, KV, hdp}));
  ASSERT_EQ(v.sizes(), (std::vector<int64_t>{B, T, KV, hdp}));
  const auto parts = qkv.split({H * hd, KV * hd, KV * hd}, -1);
  const at::Tensor qr = fused::rotate_pairs(parts[0].reshape({B, T, H, hd}), cos, sin);
  const at::Tensor kr = fused::rotate_pairs(parts[1].reshape({B, T, KV, hd}), cos, sin);
  EXPECT_LT(rel(q.narrow(-1, 0, hd), qr), 1e-7);
  EXPECT_LT(rel(k.narrow(-1, 0, hd), kr), 1e-7);
  EXPECT_LT(rel(v.narrow(-1, 0, hd), parts[2].reshape({B, T, KV, hd})), 1e-7);
  for (const auto& t : {q, k, v}) EXPECT_EQ(t.narrow(-1, hd, hdp - hd).abs().max().item<double>(), 0.0);
  std::vector<at::Tensor> probes = {at::randn({B, T, H, hdp}, at::kDouble), at::randn({B, T, KV, hdp}, at::kDouble),
                                    at::randn({B, T, KV, hdp}, at::kDouble)};
  const auto g = grads({q, k, v}, probes, {qkv});
  const auto gr = grads({qr, kr, parts[2].reshape({B, T, KV, hd})},
                        {probes[0].narrow(-1, 0, hd), probes[1].narrow(-1, 0, hd), probes[2].narrow(-1, 0, hd)}, {qkv});
  EXPECT_LT(rel(g[0], gr[0]), 1e-5);
}

TEST(FusedOps, SwigluMatchesSiluTimesU) {
  at::manual_seed(5);
  const at::Tensor gu = leaf({3, 4, 2 * 24}, at::kFloat, 3.0);
  const at::Tensor probe = at::randn({3, 4, 24}, at::kDouble);
  const at::Tensor out = fused::swiglu(gu);
  const auto parts = gu.chunk(2, -1);
  const at::Tensor ref = at::silu(parts[0]) * parts[1];
  EXPECT_LT(rel(out, ref), 1e-6);
  EXPECT_LT(rel(grads({out}, {probe}, {gu})[0], grads({ref}, {probe}, {gu})[0]), 1e-5);
}

TEST(FusedOps, LinearGivesTheWeightGradientInTheWeightsDtype) {
  at::manual_seed(6);
  const at::Tensor x = leaf({5, 3, 16}), w = leaf({12, 16});
  const at::Tensor probe = at::randn({5, 3, 12}, at::kDouble);
  const at::Tensor y = fused::linear(x, w, at::kFloat);
  const at::Tensor ref = at::linear(x, w);
  EXPECT_LT(rel(y, ref), 1e-6);
  const auto g = grads({y}, {probe}, {x, w});
  const auto gr = grads({ref}, {probe}, {x, w});
  EXPECT_LT(rel(g[0], gr[0]), 1e-5);
  EXPECT_LT(rel(g[1], gr[1]), 1e-5);
  // bf16 compute over fp32 master weights: the gradient comes back fp32.
  const at::Tensor yb = fused::linear(x, w, at::kBFloat16);
  EXPECT_EQ(yb.scalar_type(), at::kBFloat16);
  const auto gb = grads({yb}, {probe}, {x, w});
  EXPECT_EQ(gb[1].scalar_type(), at::kFloat);
  EXPECT_LT(rel(gb[1], gr[1]), 2e-2);
}

TEST(FusedOps, LinearCrossEntropyEqualsCrossEntropyOfTheLogitsInEveryChunking) {
  at::manual_seed(7);
  const int64_t N = 10, D = 16, V = 40;
  const at::Tensor h = leaf({N, D}), w = leaf({V, D}, at::kFloat, 0.5);
  const at::Tensor targets = at::randint(0, V, {N}, at::kLong);
  const at::Tensor ref = at::cross_entropy_loss(at::linear(h, w).to(at::kFloat), targets);
  const auto gr = torch::autograd::grad({ref * 3.0}, {h, w});
  for (int64_t chunk : {0, 1, 3, 10}) {
    const at::Tensor loss = fused::linear_cross_entropy(h, w, targets, at::kFloat, chunk);
    EXPECT_NEAR(loss.item<double>(), ref.item<double>(), 1e-5) << "chunk " << chunk;
    // the incoming gradient (3 here, 1/accum in training) scales both results
    const auto g = torch::autograd::grad({loss * 3.0}, {h, w});
    EXPECT_LT(rel(g[0], gr[0]), 1e-5) << "chunk " << chunk;
    EXPECT_LT(rel(g[1], gr[1]), 1e-5) << "chunk " << chunk;
  }
}

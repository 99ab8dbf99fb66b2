// The LLaMA model: sizes, FLOPs, causality, creation on the requested dtype.
#include <gtest/gtest.h>

#include <torch/csrc/autograd/autograd.h>

#include "core/engine/model/llama.h"
#include "core/engine/strategy/strategy.h"
#include "core/metrics/flops.h"
#include "core/predict/model_shape.h"
#include "engine_test_util.h"

namespace te = tunebench::engine;
using tunebench::engine::testing::small_config;

namespace {
int64_t count(const tunebench::config::ModelDims& d) {
  int64_t n = 0;
  for (size_t u = 0; u < static_cast<size_t>(d.layers) + 2; ++u) n += te::numel_of(te::LlamaModel::unit_shapes(d, u));
  return n;
}
}  // namespace

TEST(LlamaModel, SevenBillionPresetHasTheReferenceParameterCount) {
  const auto d = *tunebench::config::model_preset("7b");
  // 32 * (2*4096 + 4*4096^2 + 3*4096*11008) + 2*32000*4096 + 4096: the reference's 6.74 B.
  EXPECT_EQ(count(d), 6738415616);
}

TEST(LlamaModel, FlopsPerTokenFollowsPaLM) {
  const auto c = small_config();
  te::LlamaModel m(c.dims, at::TensorOptions().dtype(at::kFloat));
  const int64_t n = count(c.dims);
  EXPECT_EQ(m.parameter_count(), n);
  // N_matmul: everything but the embedding lookup and the norm weights (2 per block, the final one).
  const int64_t norms = (2 * c.dims.layers + 1) * c.dims.dim;
  EXPECT_EQ(m.matmul_parameter_count(), n - c.dims.vocab * c.dims.dim - norms);
  const double expected = 6.0 * (n - c.dims.vocab * c.dims.dim - norms) + 12.0 * c.dims.layers * c.dims.dim * 32;
  EXPECT_DOUBLE_EQ(m.flops_per_token(32), expected);
}

TEST(LlamaModel, PresetsHaveThePublishedParameterCounts) {
  // Each preset named after a public model counts as that model within 1 % (embedding and head
  // counted as the worker builds them: tied in Llama 3.2, Qwen2.5's q/k/v biases left out).
  for (const auto& name : tunebench::config::model_preset_names()) {
    const int64_t published = tunebench::config::published_parameters(name);
    if (published == 0) continue;
    const auto d = *tunebench::config::model_preset(name);
    const int64_t n = count(d);
    EXPECT_EQ(n, tunebench::predict::parameter_count(d)) << name;
    EXPECT_NEAR(static_cast<double>(n) / static_cast<double>(published), 1.0, 0.01) << name << ": " << n;
  }
  // Llama-3.1-8B exactly: 32 * (2*4096 + 4096*6144 + 4096^2 + 3*4096*14336) + 2*128256*4096 + 4096.
  EXPECT_EQ(count(*tunebench::config::model_preset("llama3.1-8b")), 8030261248);
  // Llama-3.2-1B: the output head is the embedding, counted once.
  EXPECT_EQ(count(*tunebench::config::model_preset("llama3.2-1b")), 1235814400);
}

TEST(LlamaModel, GroupedQueryAttentionIsMultiHeadAttentionWithKeyValueHeadsShared) {
  // Query head h reads key/value head h / (heads / kv_heads), as SDPA's enable_gqa (and
  // repeat_interleave) mean: a multi-head model whose k and v rows repeat each shared head for
  // its group computes the same block.
  auto gqa = small_config().dims;  // dim 64, 4 heads of 16
  gqa.kv_heads = 2;
  auto mha = gqa;
  mha.kv_heads = 0;
  at::manual_seed(3);
  te::LlamaModel a(gqa, at::TensorOptions().dtype(at::kDouble));
  te::LlamaModel b(mha, at::TensorOptions().dtype(at::kDouble));
  a.prepare_rope(16, at::kCPU);
  b.prepare_rope(16, at::kCPU);
  const int64_t D = gqa.dim, hd = gqa.head_dim();
  {
    at::NoGradGuard no_grad;
    for (size_t u = 0; u < a.unit_count(); ++u)
      for (size_t i = 0; i < a.units()[u].params.size(); ++i) {
        const at::Tensor& src = a.units()[u].params[i];
        at::Tensor dst = b.units()[u].params[i];
        if (u == 0 || u + 1 == a.unit_count() || i != 1) {
          dst.copy_(src);
          continue;
        }
        // wqkv: q rows as they are; k and v rows of shared head j copied to query heads 2j, 2j+1
        dst.narrow(0, 0, D).copy_(src.narrow(0, 0, D));
        for (int64_t part = 0; part < 2; ++part)
          for (int64_t h = 0; h < gqa.heads; ++h)
            dst.narrow(0, D + part * D + h * hd, hd).copy_(src.narrow(0, D + part * 2 * hd + (h / 2) * hd, hd));
      }
  }
  EXPECT_EQ(a.units()[1].params[1].size(0), D + 2 * 2 * hd);
  const at::Tensor x = at::randn({2, 16, D}, at::kDouble);
  at::NoGradGuard no_grad;
  const at::Tensor ya = a.unit_forward(1, x, a.units()[1].params);
  const at::Tensor yb = b.unit_forward(1, x, b.units()[1].params);
  EXPECT_LT((ya - yb).abs().max().item<double>(), 1e-10);
}

TEST(LlamaModel, PaddedAttentionHeadsComputeTheSameBlock) {
  // A head size the attention kernel takes padded (16 -> 24 here) gets zero columns, which add
  // nothing to QK^T, and the real head size's scale: the block's output is unchanged.
  const auto dims = small_config().dims;  // dim 64, 4 heads of 16
  at::manual_seed(5);
  te::LlamaModel m(dims, at::TensorOptions().dtype(at::kDouble));
  m.prepare_rope(16, at::kCPU);
  const at::Tensor x = at::randn({2, 16, dims.dim}, at::kDouble);
  at::NoGradGuard no_grad;
  const at::Tensor plain = m.unit_forward(1, x, m.units()[1].params);
  te::ModelKernels padded = m.kernels();
  padded.attention_head_dim = dims.head_dim() + 8;
  m.set_kernels(padded);
  const at::Tensor with_padding = m.unit_forward(1, x, m.units()[1].params);
  EXPECT_LT((plain - with_padding).abs().max().item<double>(), 1e-10);
}

TEST(LlamaModel, TiedEmbeddingsShareOneMatrixWhoseGradientSumsBothUses) {
  auto tied = small_config().dims;
  tied.tie_embeddings = true;
  auto untied = tied;
  untied.tie_embeddings = false;
  at::manual_seed(8);
  te::LlamaModel a(tied, at::TensorOptions().dtype(at::kDouble));
  te::LlamaModel b(untied, at::TensorOptions().dtype(at::kDouble));
  ASSERT_EQ(a.units().back().params.size(), 1u) << "a tied head keeps only its norm";
  EXPECT_EQ(a.parameter_count(), b.parameter_count() - tied.vocab * tied.dim);
  EXPECT_EQ(a.matmul_parameter_count(), b.matmul_parameter_count()) << "the head is a matmul either way";
  {
    at::NoGradGuard no_grad;
    for (size_t u = 0; u < a.unit_count(); ++u)
      for (size_t i = 0; i < a.units()[u].params.size(); ++i) b.units()[u].params[i].copy_(a.units()[u].params[i]);
    b.units().back().params[1].copy_(a.units()[0].params[0]);  // the untied head starts as the embedding
  }
  a.prepare_rope(16, at::kCPU);
  b.prepare_rope(16, at::kCPU);
  const at::Tensor tokens = at::randint(0, tied.vocab, {2, 17}, at::kLong);
  auto loss = [&](te::LlamaModel& m) {
    at::Tensor h = tokens.narrow(1, 0, 16);
    for (size_t u = 0; u + 1 < m.unit_count(); ++u) h = m.unit_forward(u, h, m.units()[u].params);
    return m.head_loss(h, m.units().back().params, tokens.narrow(1, 1, 16));
  };
  const at::Tensor la = loss(a), lb = loss(b);
  EXPECT_NEAR(la.item<double>(), lb.item<double>(), 1e-12);
  const auto ga = torch::autograd::grad({la}, {a.units()[0].params[0]});
  const auto gb = torch::autograd::grad({lb}, {b.units()[0].params[0], b.units().back().params[1]});
  EXPECT_LT((ga[0] - (gb[0] + gb[1])).abs().max().item<double>(), 1e-12);
}

TEST(LlamaModel, TiedEmbeddingsSparseLookupGradientChangesNoBit) {
  // compile fused on one rank: the lookup's gradient comes as the batch's rows and is added to the
  // head's; the table's gradient and the loss are the dense path's to the bit.
  auto d = small_config().dims;
  d.tie_embeddings = true;
  at::manual_seed(12);
  te::LlamaModel m(d, at::TensorOptions().dtype(at::kFloat));
  m.prepare_rope(16, at::kCPU);
  const at::Tensor tokens = at::randint(0, 9, {2, 17}, at::kLong);  // few distinct tokens: rows repeat
  auto loss_and_grad = [&](bool sparse) {
    m.set_kernels(te::ModelKernels{true, at::kBFloat16, false, 0, sparse});
    at::Tensor h = tokens.narrow(1, 0, 16);
    for (size_t u = 0; u + 1 < m.unit_count(); ++u) h = m.unit_forward(u, h, m.units()[u].params);
    const at::Tensor loss = m.head_loss(h, m.units().back().params, tokens.narrow(1, 1, 16));
    return std::make_pair(loss, torch::autograd::grad({loss}, {m.units()[0].params[0]})[0]);
  };
  const auto [dense_loss, dense] = loss_and_grad(false);
  const auto [rows_loss, rows] = loss_and_grad(true);
  EXPECT_TRUE(at::equal(dense_loss, rows_loss));
  ASSERT_FALSE(rows.is_sparse());
  EXPECT_TRUE(at::equal(rows, dense));
}

TEST(LlamaModel, ParametersAreLeafViewsOfOneFlatBufferPerUnit) {
  const auto c = small_config();
  at::manual_seed(0);
  te::LlamaModel m(c.dims, at::TensorOptions().dtype(at::kFloat));
  ASSERT_EQ(m.unit_count(), static_cast<size_t>(c.dims.layers) + 2);
  for (const auto& u : m.units()) {
    int64_t n = 0;
    for (const auto& p : u.params) {
      EXPECT_TRUE(p.is_leaf());
      EXPECT_TRUE(p.requires_grad());
      EXPECT_EQ(p.storage().data(), u.flat.storage().data()) << u.name;
      n += p.numel();
    }
    EXPECT_EQ(n, u.flat.numel());
  }
  // matrices ~N(0, 0.02), norm weights 1
  const auto& block = m.units()[1].params;
  EXPECT_NEAR(block[1].std().item<double>(), 0.02, 0.002);
  EXPECT_EQ(block[0].min().item<double>(), 1.0);
}

TEST(LlamaModel, PureBf16CreatesBf16Weights) {
  const auto c = small_config();
  te::LlamaModel m(c.dims, at::TensorOptions().dtype(at::kBFloat16));
  for (const auto& p : m.parameters()) EXPECT_EQ(p.scalar_type(), at::kBFloat16);
}

TEST(LlamaModel, AttentionIsCausal) {
  const auto c = small_config();
  at::manual_seed(1);
  te::LlamaModel m(c.dims, at::TensorOptions().dtype(at::kFloat));
  m.prepare_rope(c.seq_len, at::kCPU);
  at::NoGradGuard no_grad;
  auto run = [&](const at::Tensor& tokens) {
    at::Tensor h = tokens;
    for (size_t u = 0; u < m.unit_count(); ++u) h = m.unit_forward(u, h, m.units()[u].params);
    return h;
  };
  at::Tensor a = tunebench::engine::testing::random_tokens(c, 2, 5).narrow(1, 0, c.seq_len);
  at::Tensor b = a.clone();
  b.select(1, 20).fill_(3);  // change one token in the middle
  const at::Tensor la = run(a), lb = run(b);
  EXPECT_EQ(la.sizes(), (std::vector<int64_t>{2, c.seq_len, c.dims.vocab}));
  EXPECT_TRUE(at::allclose(la.narrow(1, 0, 20), lb.narrow(1, 0, 20), 1e-5, 1e-6)) << "the past must not see the future";
  EXPECT_FALSE(at::allclose(la.narrow(1, 20, 12), lb.narrow(1, 20, 12), 1e-5, 1e-6));
}

TEST(LlamaModel, WeightCopiesFromTheOptimizerAreReadOnceInsteadOfACast) {
  // compile fused: the optimizer writes each weight's bf16 copy; the next forward reads it where it
  // would cast, gets the same numbers, and lets go of it (a stale copy is never read twice).
  auto d = small_config().dims;
  d.kv_heads = 2;
  d.tie_embeddings = true;
  at::manual_seed(11);
  te::LlamaModel m(d, at::TensorOptions().dtype(at::kFloat));
  m.set_kernels(te::ModelKernels{true, at::kBFloat16, false, 0});
  m.prepare_rope(16, at::kCPU);
  const at::Tensor tokens = at::randint(0, d.vocab, {2, 17}, at::kLong);
  auto loss = [&] {
    at::Tensor h = tokens.narrow(1, 0, 16);
    for (size_t u = 0; u + 1 < m.unit_count(); ++u) h = m.unit_forward(u, h, m.units()[u].params);
    return m.head_loss(h, m.units().back().params, tokens.narrow(1, 1, 16));
  };
  const at::Tensor cast = loss();
  std::vector<at::Tensor> copies;
  for (size_t u = 0; u < m.unit_count(); ++u)
    for (const auto& c : m.new_weight_copies(u)) copies.push_back(c.half);
  const auto params = m.parameters();
  ASSERT_EQ(copies.size(), params.size());
  {
    at::NoGradGuard no_grad;
    for (size_t i = 0; i < copies.size(); ++i) {
      EXPECT_EQ(copies[i].scalar_type(), at::kBFloat16);
      copies[i].copy_(params[i]);
    }
  }
  ASSERT_TRUE(m.has_weight_copies());
  const at::Tensor copied = loss();
  EXPECT_EQ(cast.item<double>(), copied.item<double>());
  EXPECT_FALSE(m.has_weight_copies()) << "every unit's copies, the tied head's included, were read and let go";
  // Copies that disagree with the weights change the result: they are really what the forward read.
  for (size_t u = 0; u < m.unit_count(); ++u)
    for (const auto& c : m.new_weight_copies(u)) c.half.zero_();
  const at::Tensor zeros = loss();
  EXPECT_NE(zeros.item<double>(), cast.item<double>());
  // and the gradient still reaches the fp32 weights
  const auto g = torch::autograd::grad({cast}, {m.units()[1].params[1]});
  EXPECT_EQ(g[0].scalar_type(), at::kFloat);
  EXPECT_GT(g[0].abs().sum().item<double>(), 0.0);
}

TEST(LlamaModel, HalfWeightGradsAreTheBlocksMatmulGradientsInBf16) {
  // rules::half_weight_grads: the fused linears' backward puts the blocks' matmul weights' dW in
  // bf16 into the model's store instead of their .grad; the optimizer's gradient list takes them
  // there, the other parameters' from .grad. On the CPU dW in fp32 is the bf16 GEMM's output cast,
  // so the two agree bit for bit.
  auto d = small_config().dims;
  d.kv_heads = 2;
  const at::Tensor tokens = at::randint(0, d.vocab, {2, 17}, at::kLong);
  auto backward = [&](te::LlamaModel& m) {
    m.prepare_rope(16, at::kCPU);
    at::Tensor h = tokens.narrow(1, 0, 16);
    for (size_t u = 0; u + 1 < m.unit_count(); ++u) h = m.unit_forward(u, h, m.units()[u].params);
    m.head_loss(h, m.units().back().params, tokens.narrow(1, 1, 16)).backward();
  };
  at::manual_seed(5);
  te::LlamaModel full(d, at::TensorOptions().dtype(at::kFloat));
  full.set_kernels(te::ModelKernels{true, at::kBFloat16, false, 0});
  backward(full);
  at::manual_seed(5);
  te::LlamaModel half(d, at::TensorOptions().dtype(at::kFloat));
  te::ModelKernels k{true, at::kBFloat16, false, 0};
  k.half_weight_grads = true;
  half.set_kernels(k);
  backward(half);

  te::SingleStrategy strategy(half);
  const std::vector<at::Tensor> grads = strategy.optimizer_grads();
  const auto params = half.parameters(), reference = full.parameters();
  ASSERT_EQ(grads.size(), params.size());
  size_t in_bf16 = 0;
  size_t i = 0;
  for (size_t u = 0; u < half.unit_count(); ++u) {
    for (size_t j = 0; j < half.units()[u].params.size(); ++j, ++i) {
      const at::Tensor& want = reference[i].grad();
      ASSERT_TRUE(want.defined());
      const bool matmul = u > 0 && u + 1 < half.unit_count() && params[i].dim() == 2;
      if (matmul) {
        ++in_bf16;
        EXPECT_FALSE(params[i].grad().defined()) << half.units()[u].param_names[j] << ": no fp32 gradient beside it";
        ASSERT_EQ(grads[i].scalar_type(), at::kBFloat16) << half.units()[u].param_names[j];
        EXPECT_TRUE(grads[i].equal(want.to(at::kBFloat16))) << half.units()[u].param_names[j];
      } else {
        ASSERT_EQ(grads[i].scalar_type(), at::kFloat) << half.units()[u].param_names[j];
        EXPECT_TRUE(grads[i].equal(want)) << half.units()[u].param_names[j];
      }
    }
  }
  EXPECT_EQ(in_bf16, static_cast<size_t>(4 * d.layers));
  // Handed over once: the store forgets them, as zero_grad(set_to_none=True) forgets .grad.
  for (const auto& g : half.take_half_weight_grads()) EXPECT_FALSE(g.defined());
  // Off under amp fp8 (its linears are the float8 nodes).
  te::ModelKernels fp8 = k;
  fp8.fp8 = true;
  half.set_kernels(fp8);
  EXPECT_FALSE(half.kernels().half_weight_grads);
}

// The LLaMA model: sizes, FLOPs, causality, creation on the requested dtype.
#include <gtest/gtest.h>

#include "core/engine/model/llama.h"
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
  EXPECT_EQ(m.matmul_parameter_count(), n - c.dims.vocab * c.dims.dim);
  const double expected = 6.0 * (n - c.dims.vocab * c.dims.dim) + 12.0 * c.dims.layers * c.dims.dim * 32;
  EXPECT_DOUBLE_EQ(m.flops_per_token(32), expected);
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

// gemm::mm (core/engine/kernels/gemm_search.h) where no search applies: the CPU build. There it
// must be at::mm itself, for every layout the linear layers hand it and every output type. The
// search itself (bit-identical to at::mm on fresh operands, and its
// speed) is checked on the GPU: tests/gpu/kernel_check.cpp, `scripts/gpu-bench.sh gemm-search`.
#include <gtest/gtest.h>

#include "core/engine/kernels/gemm_search.h"

namespace gemm = tunebench::engine::gemm;

namespace {

at::Tensor rand(at::IntArrayRef sizes, at::ScalarType t) {
  return at::randn(sizes, at::TensorOptions().dtype(at::kFloat)).to(t);
}

// What the linear layers ran before gemm::mm: at::mm, its result converted to `out`.
at::Tensor reference(const at::Tensor& a, const at::Tensor& b, at::ScalarType out) { return at::mm(a, b).to(out); }

}  // namespace

TEST(GemmSearch, IsAtMmForEveryLayoutAndOutputType) {
  const int64_t tokens = 37, in = 24, out = 40;
  for (const at::ScalarType t : {at::kFloat, at::kBFloat16}) {
    const at::Tensor x = rand({tokens, in}, t), w = rand({out, in}, t), dy = rand({tokens, out}, t);
    // forward x w^T (w^T column-major), input gradient dy w, weight gradient dy^T x (dy^T column-major)
    EXPECT_TRUE(at::equal(gemm::mm(x, w.t(), t), reference(x, w.t(), t)));
    EXPECT_TRUE(at::equal(gemm::mm(dy, w, t), reference(dy, w, t)));
    const at::Tensor dw = gemm::mm(dy.t(), x, at::kFloat);
    EXPECT_EQ(dw.scalar_type(), at::kFloat);
    EXPECT_EQ(dw.sizes(), (std::vector<int64_t>{out, in}));
    EXPECT_TRUE(at::equal(dw, reference(dy.t(), x, at::kFloat)));
  }
  // A row slice with a leading dimension larger than its width (the fused loss's chunks of rows).
  const at::Tensor wide = rand({tokens, 2 * in}, at::kBFloat16).narrow(1, 3, in);
  const at::Tensor w = rand({out, in}, at::kBFloat16);
  EXPECT_TRUE(at::equal(gemm::mm(wide, w.t(), at::kBFloat16), reference(wide, w.t(), at::kBFloat16)));
}

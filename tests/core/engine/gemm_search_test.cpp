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

// The layout rule the search hands cuBLASLt, for the operands the linear layers make: a row-major
// activation, a weight's transpose, a gradient's transpose, a row slice of a wider tensor; and the
// operand it rebuilds from that rule holds the same layout over the storage the rule says it spans.
TEST(GemmSearch, ReadsEachOperandLayoutAsCublasDoes) {
  namespace d = gemm::detail;
  const at::Tensor x = rand({37, 24}, at::kFloat);
  const auto row = d::column_major(x);
  ASSERT_TRUE(row);
  EXPECT_FALSE(row->transpose);  // read as its transpose, 24 x 37, leading dimension 24
  EXPECT_EQ(row->rows, 24);
  EXPECT_EQ(row->cols, 37);
  EXPECT_EQ(row->ld, 24);

  const auto col = d::column_major(x.t());  // [24, 37], stride 1 down a column
  ASSERT_TRUE(col);
  EXPECT_TRUE(col->transpose);
  EXPECT_EQ(col->rows, 24);
  EXPECT_EQ(col->cols, 37);
  EXPECT_EQ(col->ld, 24);

  const at::Tensor slice = rand({37, 48}, at::kFloat).narrow(1, 3, 24);  // leading dimension 48
  const auto wide = d::column_major(slice);
  ASSERT_TRUE(wide);
  EXPECT_FALSE(wide->transpose);
  EXPECT_EQ(wide->ld, 48);
  EXPECT_TRUE(d::column_major(slice.t()).value().transpose);

  EXPECT_FALSE(d::column_major(rand({8, 6}, at::kFloat).slice(1, 0, 6, 2)));  // every other column
  EXPECT_FALSE(d::column_major(rand({4, 8, 6}, at::kFloat).select(2, 1)));    // strides 48 and 6: no unit stride

  for (const auto& [t, m] : {std::pair{x, *row}, std::pair{x.t(), *col}, std::pair{slice, *wide}}) {
    for (uint32_t align : {256u, 4u}) {
      const at::Tensor r = d::random_operand(t.size(0), t.size(1), m, align, at::TensorOptions().dtype(at::kFloat));
      EXPECT_EQ(r.sizes(), t.sizes());
      EXPECT_EQ(r.strides(), t.strides());
      EXPECT_EQ(r.storage_offset(), align < 256 ? 1 : 0);  // 4 bytes = one float
      // The last element read is the storage's last: the span is exact.
      EXPECT_EQ(r.storage_offset() + (r.size(0) - 1) * r.stride(0) + (r.size(1) - 1) * r.stride(1) + 1,
                static_cast<int64_t>(r.storage().nbytes() / sizeof(float)));
      const auto again = d::column_major(r);
      ASSERT_TRUE(again);
      EXPECT_EQ(again->transpose, m.transpose);
      EXPECT_EQ(again->ld, m.ld);
    }
  }
}

// Token sources and the data pipeline.
#include <gtest/gtest.h>

#include <time.h>

#include <chrono>
#include <fstream>
#include <set>

#include "core/engine/data/data_pipeline.h"
#include "core/engine/data/token_source.h"
#include "core/engine/errors.h"
#include "engine_test_util.h"

namespace te = tunebench::engine;
using tunebench::engine::testing::small_config;

TEST(TokenSource, SyntheticIsDeterministicAndInRange) {
  te::SyntheticTokens a(7, 96), b(7, 96), c(8, 96);
  std::vector<int64_t> x(500), y(500), z(500);
  a.fill(42, x.data(), 500);
  b.fill(42, y.data(), 500);
  c.fill(42, z.data(), 500);
  EXPECT_EQ(x, y);
  EXPECT_NE(x, z);
  for (auto t : x) {
    EXPECT_GE(t, 0);
    EXPECT_LT(t, 96);
  }
  std::set<int64_t> distinct(x.begin(), x.end());
  EXPECT_GT(distinct.size(), 80u);
}

TEST(TokenSource, FileWindowsAreContiguousSlicesOfTheFile) {
  const std::string path = te::testing::write_pattern_file("pattern", 10000, 17, 96);
  te::TokenFile f(path, tunebench::config::TokenDtype::Uint16, 3, 96, 33);
  EXPECT_EQ(f.tokens(), 10000);
  std::vector<int64_t> w(33);
  f.fill(5, w.data(), 33);
  // the pattern: token(i) = (i % 17) * 7 % 96, so consecutive tokens follow the pattern
  int start = -1;
  for (int s = 0; s < 17; ++s)
    if ((s * 7) % 96 == w[0]) start = s;
  ASSERT_GE(start, 0);
  for (int i = 0; i < 33; ++i) EXPECT_EQ(w[i], ((start + i) % 17) * 7 % 96) << i;
}

TEST(TokenSource, BadFilesAreConfigErrors) {
  EXPECT_THROW(te::TokenFile("/nonexistent/tokens.bin", tunebench::config::TokenDtype::Uint16, 0, 96, 8),
               te::EngineError);
  const std::string odd = ::testing::TempDir() + "/odd.bin";
  std::ofstream(odd) << "abc";  // 3 bytes: not a multiple of 2
  EXPECT_THROW(te::TokenFile(odd, tunebench::config::TokenDtype::Uint16, 0, 96, 1), te::EngineError);
  const std::string path = te::testing::write_pattern_file("short", 10, 5, 96);
  EXPECT_THROW(te::TokenFile(path, tunebench::config::TokenDtype::Uint16, 0, 96, 32), te::EngineError);
  // token ids beyond the vocabulary
  const std::string big = te::testing::write_pattern_file("big", 1000, 50, 1000);
  te::TokenFile f(big, tunebench::config::TokenDtype::Uint16, 0, 96, 32);
  std::vector<int64_t> w(32);
  try {
    for (uint64_t s = 0; s < 50; ++s) f.fill(s, w.data(), 32);
    FAIL() << "a token >= vocab must be reported";
  } catch (const te::EngineError& e) {
    EXPECT_EQ(e.kind(), "config");
    EXPECT_NE(std::string(e.what()).find("vocabulary"), std::string::npos);
  }
}

TEST(DataPipeline, YieldsExactlyTheRequestedBatchesPerRank) {
  auto c = small_config();
  for (int workers : {0, 2}) {
    c.num_workers = workers;
    te::DataPipeline rank0(c, 0, 2, 5, false), rank1(c, 1, 2, 5, false);
    for (int i = 0; i < 5; ++i) {
      const at::Tensor a = rank0.next(), b = rank1.next();
      EXPECT_EQ(a.sizes(), (std::vector<int64_t>{c.micro_batch, c.seq_len + 1}));
      EXPECT_EQ(a.scalar_type(), at::kLong);
      EXPECT_FALSE(at::equal(a, b)) << "ranks must see different samples";
    }
    EXPECT_THROW(rank0.next(), std::out_of_range) << "workers=" << workers;
  }
}

namespace {
double thread_cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}
}  // namespace

// The per-sample cost is CPU work on whichever thread builds the batch: the training thread
// without loader threads, a loader thread with them. Measured as the calling thread's own CPU
// time (not wall time), with a tenfold margin either way, so a loaded machine does not decide it.
TEST(DataPipeline, PerSampleCpuCostIsSpentInTheLoader) {
  auto c = small_config();
  c.sample_cpu_us = 20'000;  // 4 samples x 20 ms = 80 ms of work per batch
  const double nominal_ms = 4 * 20.0;
  auto calling_thread_ms = [&](int workers) {
    c.num_workers = workers;
    te::DataPipeline p(c, 0, 1, 2, false);
    p.next();  // the first batch also pays one-time set-up on this thread (threads, allocator)
    const double t0 = thread_cpu_ms();
    p.next();
    return thread_cpu_ms() - t0;
  };
  const double inline_ms = calling_thread_ms(0);
  const double threaded_ms = calling_thread_ms(2);
  EXPECT_GT(inline_ms, 0.1 * nominal_ms) << "without loader threads the training thread does the work";
  EXPECT_LT(threaded_ms, 0.1 * inline_ms) << "with loader threads the training thread only waits: " << threaded_ms
                                          << " ms of its CPU vs " << inline_ms << " ms inline";
}

// `tunebench-worker --probe-link` on two CPU ranks over Gloo: one `probe` event per size with the
// nccl-tests bandwidths, the same sizes and repetition counts on every rank, then `done`; and a
// single rank is a configuration error.
#include <gtest/gtest.h>

#include "core/protocol/exit_codes.h"
#include "worker_process.h"

namespace tt = tunebench::testing;
namespace pr = tunebench::protocol;

TEST(LinkProbe, TwoGlooRanksReportTheBusBandwidthOfEverySize) {
  auto runs = tt::start_ranks(2, {"--probe-link", "--device", "cpu", "--probe-min-mb", "0.25", "--probe-max-mb", "2"},
                              "probe");
  for (auto& r : runs) EXPECT_EQ(tt::wait_rank(r, 240), 0) << tt::stderr_of(r);
  tt::kill_all(runs);
  std::vector<std::vector<pr::LinkProbe>> points;
  for (const auto& run : runs) {
    const auto log = tt::events_of(run);
    ASSERT_EQ(log.ranks.size(), 1u);
    const auto& r = log.ranks.begin()->second;
    ASSERT_TRUE(r.hello);
    EXPECT_EQ(r.hello->backend, "gloo");
    EXPECT_TRUE(r.steps.empty()) << "a probe trains nothing";
    ASSERT_TRUE(r.done);
    EXPECT_EQ(r.done->exit_code, pr::kExitOk);
    points.push_back(r.probes);
  }
  ASSERT_EQ(points[0].size(), 4u);  // 256 KiB, 512 KiB, 1 MiB, 2 MiB
  for (size_t i = 0; i < points[0].size(); ++i) {
    const auto& p = points[0][i];
    EXPECT_EQ(p.bytes, (int64_t{256} << 10) << i);
    EXPECT_EQ(p.collective, pr::Phase::AllReduce);
    EXPECT_EQ(p.world_size, 2);
    EXPECT_GE(p.iterations, 3);
    EXPECT_GT(p.time_us, 0);
    EXPECT_NEAR(p.algbw_gbps, p.bytes / (p.time_us * 1e-6) / 1e9, 1e-9 * p.algbw_gbps);
    EXPECT_NEAR(p.busbw_gbps, p.algbw_gbps * 1.0, 1e-9 * p.busbw_gbps);  // 2(n-1)/n = 1 on two ranks
    // both ranks ran the same collectives
    EXPECT_EQ(points[1][i].bytes, p.bytes);
    EXPECT_EQ(points[1][i].iterations, p.iterations);
  }
}

TEST(LinkProbe, OneRankIsAConfigurationError) {
  auto runs = tt::start_ranks(1, {"--probe-link", "--device", "cpu"}, "probe1");
  EXPECT_EQ(tt::wait_rank(runs[0], 120), pr::kExitConfig);
  const auto log = tt::events_of(runs[0]);
  ASSERT_FALSE(log.ranks.empty());
  const auto& errors = log.ranks.begin()->second.errors;
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].value.message.find("two or more"), std::string::npos) << errors[0].value.message;
}

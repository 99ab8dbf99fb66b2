// The rank's own summary figures (core/engine/stats) are the analysis' definitions applied to one
// rank: a step's communication is the time any collective is in flight (overlapping collectives
// count once), and tokens/s is the analysis' throughput of that rank's measured steps.
#include <gtest/gtest.h>

#include "core/analysis/phase_breakdown.h"
#include "core/analysis/trial_metrics.h"
#include "core/engine/stats.h"

namespace tp = tunebench::protocol;
namespace te = tunebench::engine;
namespace ta = tunebench::analysis;

namespace {
tp::Interval comm(tp::Phase phase, int64_t start, int64_t end, int64_t bytes) {
  tp::Interval in;
  in.phase = phase;
  in.lane = tp::Lane::Comm;
  in.start_us = start;
  in.end_us = end;
  in.bytes = bytes;
  return in;
}
tp::Interval compute(tp::Phase phase, int64_t start, int64_t end) {
  tp::Interval in;
  in.phase = phase;
  in.lane = tp::Lane::Compute;
  in.start_us = start;
  in.end_us = end;
  return in;
}
}  // namespace

TEST(RankSummary, AStepsCommunicationCountsOverlappingCollectivesOnce) {
  // FSDP: the next unit's all-gather runs while the previous unit's reduce-scatter is in flight.
  tp::Step s;
  s.step = 3;
  s.start_us = 0;
  s.end_us = 100'000;
  s.step_ms = 100.0;
  s.intervals = {compute(tp::Phase::Forward, 0, 40'000), compute(tp::Phase::Backward, 40'000, 90'000),
                 comm(tp::Phase::AllGather, 50'000, 80'000, 1'000'000),
                 comm(tp::Phase::ReduceScatter, 60'000, 95'000, 1'000'000)};
  te::summarise_comm(s, 2);
  const double union_ms = double(ta::breakdown_of(s).comm_us) / 1000.0;
  EXPECT_DOUBLE_EQ(union_ms, 45.0);
  EXPECT_DOUBLE_EQ(s.comm_ms, union_ms);  // the sum of durations, 65 ms, counted the overlap twice
  EXPECT_DOUBLE_EQ(s.exposed_comm_ms, double(ta::breakdown_of(s).exposed_comm_us()) / 1000.0);
}

TEST(RankSummary, TokensPerSecondIsTheAnalysisThroughputOfTheRanksSteps) {
  std::vector<tp::Step> measured;
  tp::TrialLog log;
  const int64_t times[] = {100'000, 120'000, 90'000, 150'000};
  for (int i = 0; i < 4; ++i) {
    tp::Step s;
    s.step = i + 1;
    s.start_us = 1'000'000 * i;
    s.end_us = s.start_us + times[i];
    s.step_ms = double(times[i]) / 1000.0;
    s.tokens = 4096;
    measured.push_back(s);
    log.ranks[0].steps.push_back(s);
  }
  const tp::Summary summary = te::summarise(measured, 0, 0, 0);
  EXPECT_DOUBLE_EQ(summary.tokens_per_s, ta::analyze(log).tokens_per_s_total.median);
  EXPECT_DOUBLE_EQ(summary.step_ms_median, ta::analyze(log).step_ms.median);
}

// The collective split (core/analysis/collective_split.h) on hand-made two-rank logs: rank 1
// reaches each all-reduce later by a known delay; every expected figure is computed here from the
// raw intervals of the log, not asked of the analysis.
#include "core/analysis/collective_split.h"

#include <gtest/gtest.h>

#include "core/analysis/diagnosis.h"
#include "core/analysis/trial_metrics.h"
#include "tests/core/analysis/scenarios.h"

namespace ta = tunebench::analysis;
namespace tc = tunebench::config;
namespace tp = tunebench::protocol;
using namespace tunebench::testing;
using tp::Phase;

namespace {

constexpr int64_t kSplitBytes = 40'000'000;

// Two ranks, 4 measured steps of 100 ms: forward, then two pieces of backward each followed by an
// all-reduce. Rank 1's backward pieces run `late_us` longer, so it enters each all-reduce `late_us`
// after rank 0; both leave together.
tp::TrialLog split_delayed_log(int64_t late_us, const std::string& device = "cpu") {
  tc::TrialConfig c;
  c.name = "ddp";
  c.device = device == "cpu" ? tc::Device::Cpu : tc::Device::Cuda;
  c.strategy = tc::Strategy::Ddp;
  c.world_size = 2;
  SyntheticTrial t("split", c, device, device == "cpu" ? 0 : 150'000'000'000);
  const int64_t L = late_us;
  for (int rank = 0; rank < 2; ++rank)
    for (int64_t i = 0; i < 5; ++i) {
      const int64_t d = rank == 1 ? L : 0;
      t.add_step(rank, i, 100'000,
                 {iv(Phase::Forward, 0, 20'000), iv(Phase::Backward, 20'000, 40'000 + d),
                  iv(Phase::AllReduce, 40'000 + d, 50'000 + L, kSplitBytes), iv(Phase::Backward, 50'000 + L, 70'000 + L + d),
                  iv(Phase::AllReduce, 70'000 + L + d, 80'000 + 2 * L, kSplitBytes)},
                 1024, i == 0);
    }
  return t.log();
}

struct RawSplit {
  int64_t collectives = 0, rank1_last = 0;
  double wait_ms_per_step = 0, transfer_ms_per_step = 0;
};
// From the log's own intervals: per measured step, the k-th comm interval of each rank.
RawSplit split_raw_of(const tp::TrialLog& log) {
  RawSplit r;
  const auto s0 = log.measured_steps(0), s1 = log.measured_steps(1);
  for (size_t i = 0; i < s0.size(); ++i) {
    std::vector<const tp::Interval*> a, b;
    for (const auto& in : s0[i]->intervals)
      if (in.lane == tp::Lane::Comm) a.push_back(&in);
    for (const auto& in : s1[i]->intervals)
      if (in.lane == tp::Lane::Comm) b.push_back(&in);
    for (size_t k = 0; k < a.size(); ++k) {
      ++r.collectives;
      r.rank1_last += b[k]->start_us > a[k]->start_us;
      r.wait_ms_per_step += static_cast<double>(std::abs(b[k]->start_us - a[k]->start_us)) / 1000.0;
      r.transfer_ms_per_step += static_cast<double>(std::min(a[k]->end_us, b[k]->end_us) -
                                                    std::max(a[k]->start_us, b[k]->start_us)) / 1000.0;
    }
  }
  r.wait_ms_per_step /= static_cast<double>(s0.size());
  r.transfer_ms_per_step /= static_cast<double>(s0.size());
  return r;
}

}  // namespace

TEST(CollectiveSplit, TheDelayedRankArrivesLastAndTheOthersWaitItsDelay) {
  const auto log = split_delayed_log(8'000);
  const RawSplit raw = split_raw_of(log);
  const auto split = ta::collective_split({&log});
  ASSERT_TRUE(split);
  EXPECT_EQ(split->collectives, raw.collectives);
  EXPECT_EQ(split->last_rank, 1);
  EXPECT_EQ(split->last_counts.at(1), raw.rank1_last);
  EXPECT_NEAR(split->others_wait_ms_per_step, raw.wait_ms_per_step, 1e-9);
  EXPECT_NEAR(split->transfer_ms_per_step, raw.transfer_ms_per_step, 1e-9);
  // Bus bandwidth of the transfer alone: bytes x 2(n-1)/n over the transfer time.
  ASSERT_TRUE(split->transfer_busbw_gbps);
  const double transfer_s = raw.transfer_ms_per_step / 1000.0 / 2;  // two all-reduces per step
  EXPECT_NEAR(*split->transfer_busbw_gbps, kSplitBytes * 1.0 / transfer_s / 1e9, 1e-6);
  EXPECT_FALSE(split->link_busbw_gbps);  // the CPU: no link in the catalogue
  EXPECT_EQ(ta::collective_split_sentence(*split).rfind("rank 1 arrives last in 8 of 8 all-reduces; the others wait ", 0), 0u)
      << ta::collective_split_sentence(*split);
}

TEST(CollectiveSplit, RanksArrivingTogetherNameNoLateRank) {
  const auto log = split_delayed_log(10);  // 10 µs: one rank is last, by nothing a step shows
  const auto split = ta::collective_split({&log});
  ASSERT_TRUE(split);
  const std::string sentence = ta::collective_split_sentence(*split);
  EXPECT_EQ(sentence.rfind("the ranks arrive together at the all-reduces (the others wait under ", 0), 0u) << sentence;
  EXPECT_EQ(sentence.find("arrives last"), std::string::npos) << sentence;
}

TEST(CollectiveSplit, OnCataloguedGpusTheTransferIsSetBesideTheLinksPeak) {
  const auto log = split_delayed_log(8'000, "NVIDIA H200");
  const auto split = ta::collective_split({&log});
  ASSERT_TRUE(split && split->link_busbw_gbps);
  EXPECT_GT(*split->link_busbw_gbps, 0);
  EXPECT_NE(ta::collective_split_sentence(*split).find("% of the link"), std::string::npos)
      << ta::collective_split_sentence(*split);
}

TEST(CollectiveSplit, TheDiagnosisNamesTheLateRankAndThePhaseThatMadeItLate) {
  const auto log = split_delayed_log(8'000);
  const auto m = ta::analyze(log);
  ASSERT_TRUE(m.collectives);
  const auto d = ta::diagnose(m);
  std::string all;
  for (const auto& f : d.findings) all += f.title + "\n" + f.detail + "\n";
  EXPECT_NE(all.find("ank 1 arrives last in 8 of 8 all-reduces"), std::string::npos) << all;
  EXPECT_NE(all.find("late by its backward"), std::string::npos) << all;
}

TEST(CollectiveSplit, OneRankOrNoCollectiveHasNoSplit) {
  const auto none = split_delayed_log(0);
  const auto split = ta::collective_split({&none});
  ASSERT_TRUE(split);  // two ranks arriving together: a split with no wait
  EXPECT_NEAR(split->others_wait_ms_per_step, 0.0, 1e-9);
  tc::TrialConfig c;
  c.device = tc::Device::Cpu;
  SyntheticTrial single("one", c, "cpu", 0);
  single.add_steps(1, 3, 10'000, {iv(Phase::Forward, 0, 10'000)}, 64);
  const auto log = single.log();
  EXPECT_FALSE(ta::collective_split({&log}));
}

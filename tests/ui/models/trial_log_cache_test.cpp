// TrialLogCache must not grow without bound (issue 16): a long session of trials and replays
// keeps only a budget of events; the trial being recorded is never dropped.
#include <gtest/gtest.h>

#include "ui/models/trial_log_cache.h"

using namespace tunebench;
using namespace tunebench::ui;

namespace {
EventBatch steps(int n) {
  EventBatch batch;
  for (int i = 0; i < n; ++i) {
    protocol::Step s;
    s.step = i;
    s.start_us = i * 1000;
    s.end_us = s.start_us + 900;
    s.intervals.resize(4);
    batch.push_back({{1, "t", 0, s.end_us}, s});
  }
  return batch;
}
}  // namespace

TEST(TrialLogCache, KeepsABoundedNumberOfEventsAndTheNewestTrials) {
  TrialLogCache cache;
  const EventBatch batch = steps(20000);
  for (int t = 0; t < 60; ++t) cache.add(QStringLiteral("t%1").arg(t), batch);  // 1.2 M steps
  EXPECT_LT(cache.size(), 60u);
  EXPECT_TRUE(cache.contains(QStringLiteral("t59")));
  EXPECT_FALSE(cache.contains(QStringLiteral("t0")));
}

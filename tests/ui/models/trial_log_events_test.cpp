// A stored trial back as the live event stream (what lets the same plots show stored trials):
// every record comes back, hello first, steps in time order, done last; and the log cache's
// budget never drops the running (pinned) trial.
#include <gtest/gtest.h>

#include "core/protocol/trial_log.h"
#include "ui/models/trial_log_cache.h"
#include "ui/models/trial_log_events.h"

using namespace tunebench;
using namespace tunebench::ui;

TEST(TrialLogEvents, EveryRecordComesBackInTheOrderALiveRunDelivers) {
  const protocol::TrialLog log = protocol::read_trial_log_file(TUNEBENCH_TEST_DATA_DIR "/gpu/h200x2-7b-ddp-ckpt.jsonl");
  const EventBatch events = trial_log_events(log);
  protocol::TrialLog back;
  for (const auto& e : events) back.add(e);
  ASSERT_EQ(back.ranks.size(), log.ranks.size());
  for (const auto& [rank, r] : log.ranks) {
    EXPECT_EQ(back.ranks[rank].steps.size(), r.steps.size());
    EXPECT_EQ(back.ranks[rank].samples.size(), r.samples.size());
    EXPECT_EQ(back.ranks[rank].done.has_value(), r.done.has_value());
    EXPECT_TRUE(back.ranks[rank].hello.has_value());
  }
  ASSERT_FALSE(events.empty());
  EXPECT_TRUE(events.front().is<protocol::Hello>());
  EXPECT_TRUE(events.back().is<protocol::Done>());
  int64_t last = 0;
  for (const auto& e : events)
    if (e.is<protocol::Step>()) {
      EXPECT_GE(e.header.t_us, last);
      last = e.header.t_us;
    }
}

// A trace import's steps carry no tokens; its known settings give them, once all three are known.
TEST(TrialLogEvents, StepsWithoutTokensTakeThemFromTheKnownSettings) {
  auto imported = [](nlohmann::json config) {
    protocol::TrialLog log;
    protocol::Hello hello;
    hello.config = std::move(config);
    log.add({{protocol::kSchemaVersion, "imp", 0, 0}, hello});
    for (int i = 0; i < 3; ++i) {
      protocol::Step s;
      s.step = i;
      s.start_us = i * 1000;
      s.end_us = i * 1000 + 900;
      s.tokens = i == 2 ? 7 : 0;  // a step that knows its tokens keeps them
      log.add({{protocol::kSchemaVersion, "imp", 0, s.end_us}, s});
    }
    std::vector<int64_t> tokens;
    for (const auto& e : trial_log_events(log))
      if (e.is<protocol::Step>()) tokens.push_back(e.as<protocol::Step>().tokens);
    return tokens;
  };
  EXPECT_EQ(imported({{"micro_batch", 8}, {"seq_len", 512}, {"grad_accum", 2}, {"world_size", 2}}),
            (std::vector<int64_t>{8192, 8192, 7}));
  EXPECT_EQ(imported({{"micro_batch", 8}, {"grad_accum", 2}}), (std::vector<int64_t>{0, 0, 7}));  // seq_len unknown
}

TEST(TrialLogCache, ThePinnedTrialIsNeverDropped) {
  TrialLogCache cache(1000);
  EventBatch steps;
  for (int i = 0; i < 300; ++i) {
    protocol::Step s;
    s.step = i;
    s.intervals.resize(3);
    steps.push_back({{1, "t", 0, i}, s});
  }
  cache.pin(QStringLiteral("running"));
  cache.add(QStringLiteral("running"), steps);  // 1200 records: over budget on its own
  cache.add(QStringLiteral("replay"), steps);
  EXPECT_TRUE(cache.contains(QStringLiteral("running")));
  cache.add(QStringLiteral("another"), steps);
  EXPECT_TRUE(cache.contains(QStringLiteral("running")));
  EXPECT_FALSE(cache.contains(QStringLiteral("replay")));
  cache.unpin(QStringLiteral("running"));
  cache.add(QStringLiteral("last"), steps);
  EXPECT_FALSE(cache.contains(QStringLiteral("running")));
  EXPECT_TRUE(cache.contains(QStringLiteral("last")));
}

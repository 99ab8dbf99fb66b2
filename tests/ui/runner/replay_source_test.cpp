#include <gtest/gtest.h>

#include "tests/ui/wait_for.h"

#include <QSignalSpy>
#include <QTest>

#include "ui/runner/replay_source.h"

using namespace tunebench;
using namespace tunebench::ui;

namespace {
const QString kLog = QStringLiteral(TUNEBENCH_TEST_DATA_DIR "/ui/synthetic-7b-ddp2.jsonl");
}

TEST(ReplaySource, LoadsTheSyntheticRecording) {
  ReplaySource replay;
  ASSERT_TRUE(replay.load(kLog)) << replay.errorString().toStdString();
  EXPECT_EQ(replay.worldSize(), 2);
  EXPECT_EQ(replay.plannedSteps(), 11);
  EXPECT_GT(replay.eventCount(), 40u);
}

TEST(ReplaySource, PlaysEveryEventInTimeOrderThenFinishes) {
  ReplaySource replay;
  ASSERT_TRUE(replay.load(kLog));
  size_t events = 0, steps = 0;
  int64_t last_t = 0;
  bool ordered = true;
  QObject::connect(&replay, &ReplaySource::eventsArrived, [&](const EventBatch& b) {
    for (const auto& e : b) {
      ordered = ordered && e.header.t_us >= last_t;
      last_t = e.header.t_us;
      ++events;
      if (e.is<protocol::Step>()) ++steps;
    }
  });
  QSignalSpy finished(&replay, &ReplaySource::finished);
  replay.start(50.0);  // 11 steps of ~0.4 s recorded: well under a second
  TB_WAIT_FOR((finished.size()) == (1), 30000);
  EXPECT_EQ(events, replay.eventCount());
  EXPECT_EQ(steps, 22u);
  EXPECT_TRUE(ordered);
  EXPECT_EQ(finished.at(0).at(0).value<TrialOutcome>().status, protocol::TrialStatus::Done);
}

TEST(ReplaySource, MissingFileIsAReadableError) {
  ReplaySource replay;
  EXPECT_FALSE(replay.load("/nonexistent.jsonl"));
  EXPECT_TRUE(replay.errorString().contains("cannot open"));
}

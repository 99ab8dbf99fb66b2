// The plan driver's rules, one at a time, without a session: what each event does in each phase
// (plan_driver.h). The adapters' behaviour against real stored trials is plan_faults.h's table.
#include <gtest/gtest.h>

#include "core/investigate/plan_driver.h"

namespace ti = tunebench::investigate;
using tunebench::protocol::TrialStatus;
using tunebench::store::PlanState;

namespace {

ti::PlanStep step_with_next(int finished, const std::string& why = "v1 num_workers 4") {
  ti::PlanStep s;
  s.next = ti::TrialRequest{};
  s.next->name = "investigate base: " + why;
  s.why = why;
  s.finished = finished;
  s.planned = 6;
  return s;
}

ti::PlanStep step_done(int finished, bool complete) {
  ti::PlanStep s;
  s.finished = finished;
  s.planned = 6;
  s.complete = complete;
  return s;
}

// Starts a driver and answers its first read with a trial to run, queued as `handle`.
ti::PlanDriver running(const std::string& handle = "t1") {
  ti::PlanDriver d(ti::PlanKind::Investigate, 7);
  const auto a = d.start();
  EXPECT_EQ(a.store_state, PlanState::Running);
  EXPECT_NE(a.read_step, 0u);
  const auto b = d.step_read(a.read_step, step_with_next(0));
  EXPECT_TRUE(b.launch.has_value());
  EXPECT_EQ(b.notes.back(), "[1/6] v1 num_workers 4");
  d.trial_queued(handle);
  EXPECT_EQ(d.status(), "Running: v1 num_workers 4");
  return d;
}

}  // namespace

TEST(PlanDriver, ADoneTrialReadsTheNextStepAndNothingLeftIsDone) {
  auto d = running();
  const auto a = d.trial_ended("t1", TrialStatus::Done, 11, "");
  ASSERT_NE(a.read_step, 0u);
  EXPECT_FALSE(a.finish);
  const auto b = d.step_read(a.read_step, step_done(1, true));
  EXPECT_EQ(b.finish, PlanState::Done);
  EXPECT_EQ(b.notes.back(), "Done: every planned trial is measured (plan 7).");
  EXPECT_FALSE(d.active());
  EXPECT_EQ(d.state(), PlanState::Done);
}

TEST(PlanDriver, ABudgetThatEndsThePlanSaysMoreIsLeft) {
  auto d = running();
  const auto a = d.trial_ended("t1", TrialStatus::Done, 11, "");
  const auto b = d.step_read(a.read_step, step_done(1, false));
  EXPECT_EQ(b.finish, PlanState::Done);
  EXPECT_NE(b.notes.back().find("Done within the budget (plan 7)"), std::string::npos);
}

TEST(PlanDriver, AFailedTrialCountsAndSaysWhy) {
  auto d = running();
  const auto a = d.trial_ended("t1", TrialStatus::Failed, 11, "out of memory");
  EXPECT_NE(a.read_step, 0u);
  EXPECT_EQ(a.notes.back(), "    trial 11 failed: out of memory");
}

TEST(PlanDriver, AStoppedOrInterruptedTrialPausesThePlan) {
  for (const auto status : {TrialStatus::Stopped, TrialStatus::Interrupted}) {
    auto d = running();
    const auto a = d.trial_ended("t1", status, 11, "");
    EXPECT_EQ(a.finish, PlanState::Paused);
    EXPECT_EQ(a.read_step, 0u);
    EXPECT_FALSE(d.active());
    EXPECT_NE(d.status().find(status == TrialStatus::Stopped ? "was stopped" : "was interrupted"), std::string::npos);
  }
}

TEST(PlanDriver, EndsOfOtherTrialsAreIgnored) {
  auto d = running("t1");
  const auto a = d.trial_ended("t2", TrialStatus::Stopped, 12, "");
  EXPECT_FALSE(a.finish);
  EXPECT_EQ(a.read_step, 0u);
  EXPECT_TRUE(d.active());
}

TEST(PlanDriver, CancelStopsTheRunningTrialThenPauses) {
  auto d = running("t1");
  const auto a = d.cancel();
  EXPECT_EQ(a.stop_trial, std::optional<std::string>("t1"));
  EXPECT_FALSE(a.finish);
  EXPECT_TRUE(d.active());
  EXPECT_TRUE(d.cancel().notes.empty());  // a second Cancel changes nothing
  // Whatever the trial's end (a Done that beat the stop is kept), the plan pauses.
  const auto b = d.trial_ended("t1", TrialStatus::Done, 11, "");
  EXPECT_EQ(b.finish, PlanState::Paused);
  EXPECT_EQ(b.read_step, 0u);
  EXPECT_NE(d.status().find("Cancelled"), std::string::npos);
}

TEST(PlanDriver, CancelWhileReadingPausesAtOnceAndTheLateAnswerIsIgnored) {
  ti::PlanDriver d(ti::PlanKind::Investigate, 7);
  const auto a = d.start();
  const auto c = d.cancel();
  EXPECT_EQ(c.finish, PlanState::Paused);
  EXPECT_FALSE(d.step_read(a.read_step, step_with_next(0)).launch);
}

TEST(PlanDriver, CancelWhileAPreviewAsksPausesAndALateAcceptIsStopped) {
  ti::PlanDriver d(ti::PlanKind::Investigate, 7);
  const auto a = d.start();
  d.step_read(a.read_step, step_with_next(0));
  d.launch_waiting();
  EXPECT_TRUE(d.awaiting_preview());
  EXPECT_NE(d.status().find("waiting for your answer in the launch preview"), std::string::npos);
  EXPECT_EQ(d.cancel().finish, PlanState::Paused);
  // The user accepts the old preview afterwards: that trial must not run outside the plan.
  EXPECT_EQ(d.trial_queued("late").stop_trial, std::optional<std::string>("late"));
}

TEST(PlanDriver, CancelBeforeTheLauncherAnswersStopsTheTrialItQueues) {
  ti::PlanDriver d(ti::PlanKind::Investigate, 7);
  const auto a = d.start();
  d.step_read(a.read_step, step_with_next(0));
  EXPECT_TRUE(d.cancel().notes.size() == 1);
  EXPECT_TRUE(d.active());
  EXPECT_EQ(d.trial_queued("t1").stop_trial, std::optional<std::string>("t1"));
  EXPECT_EQ(d.trial_ended("t1", TrialStatus::Stopped, 11, "").finish, PlanState::Paused);
}

TEST(PlanDriver, ARefusedLaunchPausesWithTheReason) {
  ti::PlanDriver d(ti::PlanKind::Investigate, 7);
  const auto a = d.start();
  d.step_read(a.read_step, step_with_next(0));
  const auto b = d.launch_refused("cancelled in the launch preview");
  EXPECT_EQ(b.finish, PlanState::Paused);
  EXPECT_EQ(b.notes.back(),
            "Not started: cancelled in the launch preview. The plan is paused; resuming it tries again.");
}

TEST(PlanDriver, ATrialThatEndedButIsNotCountedPausesInsteadOfRunningForever) {
  auto d = running();
  const auto a = d.trial_ended("t1", TrialStatus::Done, 11, "");
  const auto b = d.step_read(a.read_step, step_with_next(0));  // still 0 finished: its tags are missing
  EXPECT_EQ(b.finish, PlanState::Paused);
  EXPECT_FALSE(b.launch);
  EXPECT_NE(b.notes.back().find("does not count it"), std::string::npos);
}

TEST(PlanDriver, ATrialNotStoredPausesThePlan) {
  auto d = running();
  const auto a = d.trial_ended("t1", TrialStatus::Failed, 0, "disk full");
  EXPECT_EQ(a.finish, PlanState::Paused);
  EXPECT_NE(a.notes.back().find("was not stored: disk full"), std::string::npos);
}

TEST(PlanDriver, AFailedSessionReadOrWritePausesWithItsSentenceAndStopsTheTrial) {
  auto d = running("t1");
  const auto a = d.failed("s.tbsession: cannot read the plan: the disk is full");
  EXPECT_EQ(a.finish, PlanState::Paused);
  EXPECT_EQ(a.stop_trial, std::optional<std::string>("t1"));
  EXPECT_EQ(d.status(), "s.tbsession: cannot read the plan: the disk is full");
  // Idle: a failure is only said.
  const auto b = d.failed("again");
  EXPECT_FALSE(b.finish);
  EXPECT_EQ(b.notes.back(), "again");
}

TEST(PlanDriver, StartIsIgnoredWhileItRunsAndResumesAfterAPause) {
  auto d = running();
  EXPECT_EQ(d.start().read_step, 0u);
  d.trial_ended("t1", TrialStatus::Stopped, 11, "");
  const auto again = d.start();
  EXPECT_EQ(again.store_state, PlanState::Running);
  EXPECT_NE(again.read_step, 0u);
}

TEST(PlanDriver, ASearchCountsWithoutAPlannedTotal) {
  ti::PlanDriver d(ti::PlanKind::Tune, 3);
  const auto a = d.start();
  ti::PlanStep s = step_with_next(2, "mb 2 (40 s of trials so far)");
  s.planned = 0;
  EXPECT_EQ(d.step_read(a.read_step, s).notes.back(), "[3] mb 2 (40 s of trials so far)");
  d.trial_queued("t");
  const auto b = d.trial_ended("t", TrialStatus::Done, 4, "");
  EXPECT_EQ(d.step_read(b.read_step, step_done(3, true)).notes.back(), "Done: the search is finished (plan 3).");
}

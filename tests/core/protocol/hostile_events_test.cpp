// Events a worker never writes but a crafted or damaged log holds: numbers outside what a field
// can mean, repeated steps, two runs in one file, millions of bad lines. Each is a counted
// problem, never a wrapped number or a merged trial.
#include <gtest/gtest.h>

#include "core/protocol/event_fields.h"
#include "core/protocol/event_reader.h"
#include "core/protocol/event_writer.h"
#include "core/protocol/trial_log.h"

namespace tp = tunebench::protocol;

namespace {

std::string step_line(const std::string& trial, int rank, int64_t step) {
  tp::Event e;
  e.header.trial = trial;
  e.header.rank = rank;
  e.header.t_us = 1000 + step;
  tp::Step s;
  s.step = step;
  s.start_us = 1000 + 10 * step;
  s.end_us = s.start_us + 9;
  e.payload = s;
  return tp::format_line(e);
}

tp::TrialLog log_of(const std::string& text) {
  tp::TrialLog log;
  tp::TrialLogBuilder builder(log);
  tp::EventReader reader(builder);
  reader.feed(text);
  reader.finish();
  return log;
}

}  // namespace

TEST(HostileEvents, OutOfRangeNumbersAreBadEventsNotWrapped) {
  const char* lines[] = {
      R"({"v":1,"type":"step","rank":4294967296,"step":1})",            // 2^32: was rank 0
      R"({"v":1,"type":"step","rank":2147483648,"step":1})",            // 2^31: was INT_MIN
      R"({"v":1,"type":"step","rank":-1,"step":1})",                    // no such rank
      R"({"v":1,"type":"step","rank":0,"step":1e30})",                  // was INT64_MIN
      R"({"v":1,"type":"step","rank":0,"step":18446744073709551615})",  // 2^64-1: was -1
      R"({"v":1,"type":"step","rank":0,"step":-3})",                    // steps count from 0
      R"({"v":1,"type":"step","rank":0,"step":1,"start_us":1e300})",
      R"({"v":1,"type":"step","rank":0,"step":1,"tokens":1.5})",
      R"({"v":1,"type":"step","rank":0,"step":1,"intervals":[{"phase":"forward","start_us":-9223372036854775808,"end_us":9223372036854775807}]})",
      R"({"v":1,"type":"hello","rank":0,"world_size":7300000000000})",  // was 7.3e12 tokens/s
      R"({"v":1,"type":"hello","rank":0,"world_size":0})",
      R"({"v":1,"type":"gpu","rank":0,"index":0,"util_pct":1e400})",
      R"({"v":1,"type":"done","rank":0,"exit_code":4294967297})",
      R"({"v":1,"type":"step","rank":0,"step":1,"memory":{"peak_bytes":-5}})",
      R"({"v":4294967297,"type":"log","rank":0})",
      // probe events (added by the link probe) go through the same field list and ranges
      R"({"v":1,"type":"probe","rank":0,"collective":"all_reduce","bytes":1e30,"time_us":1,"busbw_gbps":1})",
      R"({"v":1,"type":"probe","rank":0,"collective":"all_reduce","bytes":-4,"time_us":1,"busbw_gbps":1})",
      R"({"v":1,"type":"probe","rank":0,"collective":"all_reduce","bytes":4,"world_size":4294967298,"time_us":1,"busbw_gbps":1})",
      R"({"v":1,"type":"probe","rank":0,"collective":"all_reduce","bytes":4,"time_us":1e400,"busbw_gbps":1})",
      R"({"v":1,"type":"probe","rank":0,"collective":"all_reduce","bytes":4,"time_us":1})",  // busbw missing
      R"({"v":1,"type":"probe","rank":0,"collective":"forward","bytes":4,"time_us":1,"busbw_gbps":1})",
  };
  for (const char* line : lines) {
    SCOPED_TRACE(line);
    tp::Event e;
    std::string why;
    EXPECT_FALSE(tp::parse_event_line(line, e, why));
    EXPECT_FALSE(why.empty());
  }
  std::string text;
  for (const char* line : lines) text += std::string(line) + "\n";
  text += step_line("", 1, 0);
  const auto log = log_of(text);
  EXPECT_EQ(log.problem_count, static_cast<int64_t>(std::size(lines)));
  ASSERT_EQ(log.ranks.size(), 1u);  // only the valid step's rank
  EXPECT_EQ(log.ranks.at(1).steps.size(), 1u);
}

TEST(HostileEvents, NumbersAtTheLimitsAreAccepted) {
  tp::Event e;
  std::string why;
  ASSERT_TRUE(
      tp::parse_event_line(R"({"v":1,"type":"step","rank":1023,"step":9007199254740992,"tokens":512.0})", e, why))
      << why;
  EXPECT_EQ(e.header.rank, tp::kMaxWorldSize - 1);
  EXPECT_EQ(e.as<tp::Step>().step, int64_t{1} << 53);
  EXPECT_EQ(e.as<tp::Step>().tokens, 512);  // a whole float is an integer
  ASSERT_TRUE(tp::parse_event_line(R"({"v":1,"type":"hello","rank":0,"world_size":1024})", e, why)) << why;
}

TEST(HostileEvents, DuplicateStepsAreKeptOnceAndReported) {
  const auto log = log_of(step_line("t", 0, 0) + step_line("t", 0, 1) + step_line("t", 0, 1) + step_line("t", 1, 1) +
                          step_line("t", 0, 0) + step_line("t", 0, 2));
  ASSERT_EQ(log.ranks.at(0).steps.size(), 3u);
  EXPECT_EQ(log.ranks.at(0).steps[2].step, 2);
  EXPECT_EQ(log.ranks.at(1).steps.size(), 1u);  // another rank's step 1 is no duplicate
  EXPECT_EQ(log.problem_count, 2);
  ASSERT_EQ(log.problems.size(), 2u);
  EXPECT_EQ(log.problems[0].kind, tp::ReadProblem::Kind::DuplicateStep);
  EXPECT_NE(log.problems[0].message.find("rank 0 sent step 1 twice"), std::string::npos) << log.problems[0].message;
}

TEST(HostileEvents, TwoTrialIdsInOneStreamAreTwoTrials) {
  // Interleaved (two runs writing to one file) and then a third appended.
  std::string text;
  for (int s = 0; s < 3; ++s) text += step_line("run-a", 0, s) + step_line("run-b", 0, s);
  text += "NCCL INFO noise\n";
  text += step_line("run-c", 0, 0);
  tp::TrialSplitter splitter;
  tp::EventReader reader(splitter);
  reader.feed(text);
  reader.finish();
  const auto logs = splitter.take();
  ASSERT_EQ(logs.size(), 3u);
  EXPECT_EQ(logs[0].trial, "run-a");
  EXPECT_EQ(logs[1].trial, "run-b");
  EXPECT_EQ(logs[2].trial, "run-c");
  EXPECT_EQ(logs[0].ranks.at(0).steps.size(), 3u);
  EXPECT_EQ(logs[1].ranks.at(0).steps.size(), 3u);
  EXPECT_EQ(logs[0].problem_count, 1);  // lines that are not events go with the first trial
  EXPECT_EQ(logs[1].problem_count + logs[2].problem_count, 0);
}

TEST(HostileEvents, ProblemsBeyondTheLimitAreOnlyCounted) {
  std::string text;
  for (int i = 0; i < 5000; ++i) text += "garbage line " + std::to_string(i) + "\n";
  const auto log = log_of(text);
  EXPECT_EQ(log.problem_count, 5000);
  EXPECT_EQ(log.problems.size(), tp::TrialLog::kMaxKeptProblems);
  EXPECT_EQ(log.problems.front().excerpt, "garbage line 0");
}

TEST(HostileEvents, NewerVersionNoticeIsNotAProblem) {
  const auto log = log_of(R"({"v":2,"type":"step","rank":0,"step":0,"new_field":1})"
                          "\n");
  EXPECT_EQ(log.problem_count, 0);
  ASSERT_EQ(log.problems.size(), 1u);  // kept for the log pane, as a notice
  EXPECT_EQ(log.problems[0].kind, tp::ReadProblem::Kind::NewerVersion);
  EXPECT_EQ(log.ranks.at(0).steps.size(), 1u);
}

// A memory-sampled step's memory timeline on the wire (Step::memory_timeline): its exact JSON
// shape, the round trip, and what the reader refuses of a crafted one (negative bytes or offsets,
// a phase it does not read, a point that is not start, peak or end, too many points), each with a
// sentence that names the point.
#include <gtest/gtest.h>

#include "core/protocol/event_reader.h"
#include "core/protocol/event_writer.h"
#include "core/protocol/events.h"
#include "core/protocol/trial_log.h"
#include "tests/core/protocol/memory_timeline_fixture.h"

namespace tp = tunebench::protocol;
using nlohmann::json;

namespace {

constexpr int64_t kGiB = int64_t{1} << 30;

std::vector<tp::MemoryTimelinePoint> nine_points() { return tunebench::testing::nine_memory_points(kGiB); }

json step_json(const json& timeline) {
  return json{{"v", 1}, {"type", "step"}, {"rank", 0}, {"step", 3}, {"memory_timeline", timeline}};
}

// Why event_from_json refused `j`, or "" when it did not.
std::string refusal(const json& j) {
  try {
    tp::event_from_json(j);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(MemoryTimeline, TheWireShapeIsAnArrayOfPointsAndRoundTrips) {
  tp::Step s;
  s.step = 3;
  s.start_us = 1'000'000;
  s.end_us = 1'268'000;
  s.memory_sampled = true;
  s.memory_categories.phase = "backward";
  s.memory_timeline = nine_points();
  const json j = tp::to_json(tp::Event{{1, "t", 0, 5}, s});
  ASSERT_TRUE(j.contains("memory_timeline"));
  const json& arr = j["memory_timeline"];
  ASSERT_TRUE(arr.is_array());
  ASSERT_EQ(arr.size(), 9u);
  // A boundary: its host time since the step's start; a peak: no time (its moment is unknown).
  EXPECT_EQ(arr[0], (json{{"phase", "forward"},
                          {"point", "start"},
                          {"offset_us", 120},
                          {"allocated_bytes", 20 * kGiB},
                          {"reserved_bytes", 30 * kGiB}}));
  EXPECT_EQ(arr[4], (json{{"phase", "backward"},
                          {"point", "peak"},
                          {"allocated_bytes", 58 * kGiB},
                          {"reserved_bytes", 64 * kGiB}}));
  EXPECT_EQ(arr[8]["phase"], "optimizer");
  EXPECT_EQ(arr[8]["point"], "end");

  // Through a line and the reader.
  std::string line = tp::format_line(tp::Event{{1, "t", 0, 5}, s});
  line.pop_back();
  tp::Event back;
  std::string why;
  ASSERT_TRUE(tp::parse_event_line(line, back, why)) << why;
  EXPECT_EQ(back.as<tp::Step>().memory_timeline, s.memory_timeline);

  // A step without one writes nothing, and reads back without one.
  tp::Step plain;
  plain.step = 4;
  const json jp = tp::to_json(tp::Event{{}, plain});
  EXPECT_FALSE(jp.contains("memory_timeline"));
  EXPECT_TRUE(tp::event_from_json(jp).as<tp::Step>().memory_timeline.empty());
  EXPECT_EQ(tp::memory_timeline_to_json(s.memory_timeline), arr);
}

TEST(MemoryTimeline, CraftedTimelinesAreRefusedWithASentence) {
  const json good = tp::memory_timeline_to_json(nine_points());
  EXPECT_EQ(refusal(step_json(good)), "");

  auto with = [&](size_t i, const char* key, json value) {
    json t = good;
    if (value.is_null())
      t[i].erase(key);
    else
      t[i][key] = std::move(value);
    return refusal(step_json(t));
  };
  EXPECT_EQ(with(2, "allocated_bytes", -1), "'memory_timeline' point 2: 'allocated_bytes' out of range: -1");
  EXPECT_EQ(with(1, "reserved_bytes", -7), "'memory_timeline' point 1: 'reserved_bytes' out of range: -7");
  EXPECT_EQ(with(0, "offset_us", -5), "'memory_timeline' point 0: 'offset_us' out of range: -5");
  EXPECT_EQ(with(3, "allocated_bytes", 1e30), "'memory_timeline' point 3: 'allocated_bytes' is not an integer in range");
  EXPECT_EQ(with(4, "allocated_bytes", nullptr), "'memory_timeline' point 4: 'allocated_bytes' is missing");
  EXPECT_EQ(with(0, "phase", "warmup"),
            "'memory_timeline' point 0: phase 'warmup' is not one a memory timeline reads (forward, backward, optimizer)");
  // A phase the protocol knows but a memory timeline does not read is refused too.
  EXPECT_EQ(with(6, "phase", "all_reduce"),
            "'memory_timeline' point 6: phase 'all_reduce' is not one a memory timeline reads (forward, backward, "
            "optimizer)");
  EXPECT_EQ(with(5, "point", "middle"), "'memory_timeline' point 5: 'point' is 'middle', not start, peak or end");
  EXPECT_EQ(with(5, "point", 3), "'memory_timeline' point 5: 'point' is not a string");

  json many = json::array();
  for (size_t i = 0; i <= tp::kMaxMemoryTimelinePoints; ++i) many.push_back(good[i % good.size()]);
  EXPECT_EQ(refusal(step_json(many)), "'memory_timeline' holds 65 points, more than the 64 a step's timeline may have");
  many.erase(many.begin());
  EXPECT_EQ(refusal(step_json(many)), "") << "the limit itself is accepted";
  EXPECT_EQ(refusal(step_json(json::object())), "'memory_timeline' is not an array");
  EXPECT_EQ(refusal(step_json(json::array({1}))), "'memory_timeline' point 0: is not an object");

  // Through the reader: a bad event with that sentence, counted; the good line around it is read.
  json bad = good;
  bad[2]["allocated_bytes"] = -1;
  tp::TrialLog log;
  tp::TrialLogBuilder builder(log);
  tp::EventReader reader(builder);
  reader.feed(step_json(good).dump() + "\n" + step_json(bad).dump() + "\n");
  reader.finish();
  ASSERT_EQ(log.ranks.at(0).steps.size(), 1u);
  EXPECT_EQ(log.ranks.at(0).steps[0].memory_timeline.size(), 9u);
  ASSERT_EQ(log.problems.size(), 1u);
  EXPECT_NE(log.problems[0].message.find("'memory_timeline' point 2: 'allocated_bytes' out of range: -1"),
            std::string::npos)
      << log.problems[0].message;
}

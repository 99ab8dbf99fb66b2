// What the hardware says, kept by the session (schema 7): a memory-sampled step's categories and
// the NVML counters of a sample survive a write and a load, through the JSON events and the store;
// steps and samples without them load without them. Schema 8: a memory-sampled step's memory
// timeline likewise, and the JSON export carries it as the wire does.
#include <gtest/gtest.h>

#include <SQLiteCpp/SQLiteCpp.h>

#include "core/protocol/event_reader.h"
#include "core/store/export.h"
#include "core/store/session_store.h"
#include "core/store/trial_writer.h"
#include "tests/core/store/test_support.h"

namespace ts = tunebench::store;
namespace tt = tunebench::store::test;
namespace tp = tunebench::protocol;

namespace {

std::vector<tp::Event> trial_with_hardware_records() {
  std::vector<tp::Event> events = tt::full_trial(1, 4);
  for (auto& e : events) {
    if (e.is<tp::Step>() && e.as<tp::Step>().step == 2) {
      auto& s = e.as<tp::Step>();
      s.memory_sampled = true;
      s.memory_categories = {"backward", 1000, 2000, 4000, 8000, 16, 0, 32, 64};
    }
    if (e.is<tp::GpuSample>() && e.as<tp::GpuSample>().util_pct) {  // every other sample
      auto& g = e.as<tp::GpuSample>();
      g.counters.energy_mj = 9'000'000'000 + e.header.t_us / 1000;
      g.counters.sm_activity_pct = 87.5;
      g.counters.tensor_activity_pct = 41.25;  // occupancy left out: absent stays absent
    }
  }
  return events;
}

// A timeline of the points' order a worker sends; `scale` tells ranks apart.
std::vector<tp::MemoryTimelinePoint> timeline(int64_t scale) {
  using tp::MemoryPoint;
  using tp::Phase;
  std::vector<tp::MemoryTimelinePoint> out;
  int64_t t = 100;
  for (const Phase phase : {Phase::Forward, Phase::Backward, Phase::Optimizer}) {
    out.push_back({phase, MemoryPoint::Start, t, 10 * scale, 20 * scale});
    out.push_back({phase, MemoryPoint::Peak, std::nullopt, 15 * scale, 21 * scale});
    t += 30'000;
    out.push_back({phase, MemoryPoint::End, t, 12 * scale, 21 * scale});
  }
  return out;
}

}  // namespace

TEST(HardwareRecords, TheMemoryTimelineSurvivesTheWireTheStoreAndTheJsonExport) {
  std::vector<tp::Event> events = tt::full_trial(2, 4);
  for (auto& e : events)
    if (e.is<tp::Step>() && e.as<tp::Step>().step == 2) e.as<tp::Step>().memory_timeline = timeline(1000 + e.header.rank);
  std::vector<tp::Event> read_back;
  for (const auto& e : events) read_back.push_back(tp::event_from_json(tp::to_json(e)));
  EXPECT_EQ(tt::canonical(tt::log_of(read_back)), tt::canonical(tt::log_of(events)));

  tt::TempDir dir;
  const auto path = dir.file("timeline.tbsession");
  const int64_t id = ts::SessionStore::create(path, "timeline").add_trial("t", {{"steps", 4}});
  {
    ts::TrialWriter w(path, id);
    for (const auto& e : events) w.add(e);
    w.finish(ts::TrialStatus::Done, "");
  }
  {
    SQLite::Database db(path, SQLite::OPEN_READONLY);
    EXPECT_EQ(db.execAndGet("SELECT count(*) FROM step_memory_timeline").getInt(), 18);
    EXPECT_EQ(db.execAndGet("SELECT count(*) FROM step_memory_timeline WHERE offset_us IS NULL").getInt(), 6);
  }
  auto store = ts::SessionStore::open(path, {ts::SessionStore::Mode::ReadOnly});
  const auto trial = store.load_trial(id);
  EXPECT_EQ(tt::canonical(trial.log), tt::canonical(tt::log_of(events)));
  for (const int rank : {0, 1})
    for (const auto& s : trial.log.ranks.at(rank).steps) {
      if (s.step == 2)
        EXPECT_EQ(s.memory_timeline, timeline(1000 + rank));
      else
        EXPECT_TRUE(s.memory_timeline.empty()) << s.step;
    }

  // The JSON export: the wire's array on the steps that have one, nothing on the others.
  const nlohmann::json j = ts::trials_to_json({trial}, {});
  const auto& steps = j["trials"][0]["ranks"][1]["steps"];
  ASSERT_EQ(steps.size(), 4u);
  EXPECT_FALSE(steps[1].contains("memory_timeline"));
  EXPECT_EQ(steps[2]["memory_timeline"], tp::memory_timeline_to_json(timeline(1001)));
  EXPECT_EQ(steps[2]["memory_timeline"][1], (nlohmann::json{{"phase", "forward"},
                                                            {"point", "peak"},
                                                            {"allocated_bytes", 15 * 1001},
                                                            {"reserved_bytes", 21 * 1001}}));
}

TEST(HardwareRecords, CategoriesAndCountersSurviveTheWireAndTheStore) {
  const auto events = trial_with_hardware_records();
  // The wire: each event through its JSON line and back.
  std::vector<tp::Event> read_back;
  for (const auto& e : events) read_back.push_back(tp::event_from_json(tp::to_json(e)));
  EXPECT_EQ(tt::canonical(tt::log_of(read_back)), tt::canonical(tt::log_of(events)));

  tt::TempDir dir;
  const auto path = dir.file("hw.tbsession");
  const int64_t id = ts::SessionStore::create(path, "hw").add_trial("t", {{"steps", 4}});
  {
    ts::TrialWriter w(path, id);
    for (const auto& e : events) w.add(e);
    w.finish(ts::TrialStatus::Done, "");
  }
  auto store = ts::SessionStore::open(path, {ts::SessionStore::Mode::ReadOnly});
  const auto log = store.load_trial(id).log;
  EXPECT_EQ(tt::canonical(log), tt::canonical(tt::log_of(events)));
  const auto& steps = log.ranks.at(0).steps;
  int sampled = 0;
  for (const auto& s : steps) {
    EXPECT_EQ(s.memory_sampled, s.step == 2);
    if (!s.memory_sampled) continue;
    ++sampled;
    EXPECT_EQ(s.memory_categories.phase, "backward");
    EXPECT_EQ(s.memory_categories.allocated_bytes(), 1000 + 2000 + 4000 + 8000 + 16 + 0 + 32);
    EXPECT_EQ(s.memory_categories.reserved_free_bytes, 64);
  }
  EXPECT_EQ(sampled, 1);
  bool with = false, without = false;
  for (const auto& g : log.ranks.at(0).samples) {
    if (g.value.counters.energy_mj) {
      with = true;
      EXPECT_EQ(*g.value.counters.energy_mj, 9'000'000'000 + g.t_us / 1000);
      EXPECT_EQ(g.value.counters.sm_activity_pct, 87.5);
      EXPECT_FALSE(g.value.counters.sm_occupancy_pct);
    } else {
      without = true;
      EXPECT_FALSE(g.value.counters.any());
    }
  }
  EXPECT_TRUE(with && without);
}

TEST(HardwareRecords, ACategoryOutOfRangeMakesABadEvent) {
  tp::Step s;
  s.step = 1;
  s.memory_sampled = true;
  s.memory_categories.parameters_bytes = 5;
  nlohmann::json j = tp::to_json(tp::Event{{}, s});
  ASSERT_EQ(j["memory_categories"]["parameters_bytes"], 5);
  j["memory_categories"]["parameters_bytes"] = -5;
  EXPECT_THROW(tp::event_from_json(j), std::invalid_argument);
}

// Investigations end to end on planted stored trials: the schedule, the ranking, the verdict,
// the budget and resuming (nothing stored is run again).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "core/investigate/investigation.h"
#include "core/investigate/plan_run.h"
#include "core/investigate/plan_tags.h"
#include "core/store/event_log_import.h"
#include "core/store/plans.h"
#include "core/store/session_store.h"
#include "tests/core/investigate/planted_trials.h"

namespace ti = tunebench::investigate;
namespace tc = tunebench::config;
namespace ts = tunebench::store;
namespace tt = tunebench::testing;

namespace {

class TempSession {
 public:
  explicit TempSession(const std::string& name)
      : m_dir(std::filesystem::temp_directory_path() /
              ("tb-investigate-" + name + "-" + std::to_string(::getpid()))) {
    std::filesystem::remove_all(m_dir);
    std::filesystem::create_directories(m_dir);
    path = (m_dir / "s.tbsession").string();
    ts::SessionStore::create(path, name);
  }
  ~TempSession() { std::filesystem::remove_all(m_dir); }
  std::string path;

 private:
  std::filesystem::path m_dir;
};

tc::TrialConfig gpu_single() {
  tc::TrialConfig c;
  c.name = "forum baseline";
  c.device = tc::Device::Cuda;
  c.amp = tc::Amp::Bf16;
  c.steps = 14;
  c.warmup = 2;
  return c;
}

// Stores the investigated trial itself (as a user's run would be) and returns its id.
int64_t store_baseline(const std::string& path, const tc::TrialConfig& c, const tt::PlantedModel& m) {
  std::mt19937_64 rng(99);
  auto s = ts::SessionStore::open(path);
  return ts::import_trial_log(s, tt::planted_trial(c, m, rng, "user-run"), c.name, "test").trial_id;
}

ti::Attribution investigate(const std::string& path, int64_t trial, const tt::PlantedModel& m, const ti::Budget& b,
                            int* calls, int64_t* plan_id = nullptr) {
  int64_t id = 0;
  {
    auto s = ts::SessionStore::open(path);
    id = ti::open_investigation(s, trial, {});
  }
  if (plan_id) *plan_id = id;
  ti::run_plan(path, {id, ti::PlanKind::Investigate, b}, tt::planted_executor(path, m, 1234, calls), {});
  auto s = ts::SessionStore::open(path);
  return ti::current_attribution(s, id);
}

}  // namespace

TEST(Investigation, APlantedDataWaitCauseRanksNumWorkersFirst) {
  TempSession session("data");
  tt::PlantedModel m;
  m.data_wait_ms_no_workers = 43;  // 30 % of a 143 ms step
  const int64_t trial = store_baseline(session.path, gpu_single(), m);
  int calls = 0;
  const auto a = investigate(session.path, trial, m, {}, &calls);
  ASSERT_FALSE(a.factors.empty());
  const auto& top = a.factors.front();
  EXPECT_EQ(top.category, ti::Category::Data) << top.title;
  EXPECT_NE(top.title.find("num_workers"), std::string::npos);
  EXPECT_TRUE(top.effect.beyond_noise);
  EXPECT_NEAR(top.effect.ratio, 143.0 / 100.2, 0.06);
  EXPECT_EQ(top.phase_moved, "data wait");
  EXPECT_LT(top.phase_delta_ms, -35);
  EXPECT_NE(a.verdict.find("What fixes it: " + top.title), std::string::npos) << a.verdict;
  EXPECT_EQ(a.baseline_repeats, 2);
  EXPECT_FALSE(a.has_communication_factor());
  EXPECT_NE(a.verdict.find("No communication factor"), std::string::npos);
}

// On the CPU the verdict's throughput is per CPU rank, never per GPU.
TEST(Investigation, ACpuBaselineIsDescribedPerCpuRank) {
  TempSession session("cpu");
  tt::PlantedModel m;
  m.data_wait_ms_no_workers = 43;
  tc::TrialConfig c = gpu_single();
  c.device = tc::Device::Cpu;
  c.amp = tc::Amp::Fp32;
  const int64_t trial = store_baseline(session.path, c, m);
  int calls = 0;
  const auto a = investigate(session.path, trial, m, {}, &calls);
  EXPECT_NE(a.verdict.find(" tokens/s per CPU rank ("), std::string::npos) << a.verdict;
  EXPECT_EQ(a.verdict.find("GPU"), std::string::npos) << a.verdict;
}

TEST(Investigation, ComputeBoundSingleRankHasNoCommunicationFactorAndNoFalseWinner) {
  TempSession session("compute");
  tt::PlantedModel m;  // no data wait, no communication: compute only
  m.compile_speedup = 1.002;  // 0.2 %: inside the noise
  const int64_t trial = store_baseline(session.path, gpu_single(), m);
  int calls = 0;
  const auto a = investigate(session.path, trial, m, {}, &calls);
  EXPECT_FALSE(a.has_communication_factor());
  for (const auto& f : a.factors) {
    EXPECT_NE(f.category, ti::Category::Communication) << f.title;
    if (f.title == "compile fused") {
      EXPECT_FALSE(f.effect.beyond_noise) << f.effect.ratio;
      EXPECT_EQ(f.repeats, 2);  // within the noise: repeated once (max_repeats 2)
    }
    if (f.title.find("num_workers") != std::string::npos) {
      EXPECT_FALSE(f.effect.beyond_noise);
    }
    if (f.effect.beyond_noise && f.effect.ratio > 1) {
      EXPECT_NE(f.title.find("micro_batch"), std::string::npos) << f.title;
    }
  }
  EXPECT_EQ(a.verdict.find("What fixes it: compile"), std::string::npos) << a.verdict;
}

TEST(Investigation, DdpCommunicationRanksCommunicationFixesFirst) {
  TempSession session("ddp");
  tt::PlantedModel m;
  m.exposed_comm_ms = 80;
  auto c = gpu_single();
  c.strategy = tc::Strategy::Ddp;
  c.world_size = 2;
  c.nccl_env["NCCL_P2P_DISABLE"] = "1";
  const int64_t trial = store_baseline(session.path, c, m);
  int calls = 0;
  ti::Budget b;
  b.max_repeats = 1;
  const auto a = investigate(session.path, trial, m, b, &calls);
  ASSERT_FALSE(a.factors.empty());
  EXPECT_TRUE(a.has_communication_factor());
  EXPECT_EQ(a.factors.front().category, ti::Category::Communication) << a.factors.front().title;
  const auto compression = std::find_if(a.factors.begin(), a.factors.end(),
                                        [](const auto& f) { return f.title == "compression bf16"; });
  ASSERT_NE(compression, a.factors.end());
  EXPECT_TRUE(compression->effect.beyond_noise);
  EXPECT_EQ(compression->phase_moved, "exposed communication");
}

TEST(Investigation, BudgetStopsAndASecondRunResumesWithoutRerunningAnything) {
  TempSession session("resume");
  tt::PlantedModel m;
  m.data_wait_ms_no_workers = 43;
  const int64_t trial = store_baseline(session.path, gpu_single(), m);
  int calls = 0;
  int64_t plan = 0;
  ti::Budget b;
  b.max_trials = 4;
  const auto partial = investigate(session.path, trial, m, b, &calls, &plan);
  EXPECT_EQ(calls, 4);
  EXPECT_FALSE(partial.not_run.empty());
  EXPECT_EQ(partial.baseline_repeats, 2);  // the budget kept room for the second baseline run
  {
    auto s = ts::SessionStore::open(session.path);
    EXPECT_EQ(ts::find_plan(s, plan)->state, ts::PlanState::Done);
  }
  int more = 0;
  int64_t plan2 = 0;
  const auto full = investigate(session.path, trial, m, {}, &more, &plan2);
  EXPECT_EQ(plan2, plan);  // the same plan, resumed
  auto s = ts::SessionStore::open(session.path);
  const auto arms = ti::finished_arms(s.list_trials(), plan);
  const auto planned = ti::load_investigation(s, plan);
  EXPECT_EQ(arms.at(ti::kBaselineArm).size(), 2u);  // not a third baseline run
  for (const auto& v : planned.variants) EXPECT_GE(arms.count(v.arm), 1u) << v.arm;
  int stored = 0;
  for (const auto& [arm, list] : arms) stored += static_cast<int>(list.size());
  EXPECT_EQ(stored, 4 + more);
  EXPECT_TRUE(full.not_run.empty());
  EXPECT_FALSE(ts::find_plan(s, plan)->result.is_null());
}

TEST(Investigation, InterruptedTrialsAreRunAgainOnResume) {
  TempSession session("interrupted");
  tt::PlantedModel m;
  const int64_t trial = store_baseline(session.path, gpu_single(), m);
  int64_t plan = 0;
  {
    auto s = ts::SessionStore::open(session.path);
    plan = ti::open_investigation(s, trial, {});
    // A baseline trial that was running when the window closed.
    const int64_t t = s.add_trial("half", nlohmann::json::object(), ts::TrialStatus::Interrupted);
    s.set_trial_tags(t, {ti::plan_tag(plan), ti::arm_tag(ti::kBaselineArm)});
    const auto next = ti::next_trial(s, plan, {});
    ASSERT_TRUE(next.has_value());
    EXPECT_EQ(next->arm, ti::kBaselineArm);
  }
}

TEST(Investigation, NoVerdictAboutVariantsBeforeAnyVariantRan) {
  // The plan view showed "No variant is faster beyond the noise" while only the baseline had run.
  TempSession session("early");
  tt::PlantedModel m;
  m.data_wait_ms_no_workers = 43;
  const int64_t trial = store_baseline(session.path, gpu_single(), m);
  int calls = 0;
  int64_t plan = 0;
  ti::Budget b;
  b.max_trials = 1;  // the baseline's first run only
  const auto a = investigate(session.path, trial, m, b, &calls, &plan);
  ASSERT_EQ(calls, 1);
  EXPECT_TRUE(a.factors.empty());
  EXPECT_EQ(a.verdict.find("No variant is faster"), std::string::npos) << a.verdict;
  EXPECT_NE(a.verdict.find("No variant has run yet"), std::string::npos) << a.verdict;
  // Nothing run at all: no attribution either.
  TempSession fresh("fresh");
  const int64_t t2 = store_baseline(fresh.path, gpu_single(), m);
  auto s = ts::SessionStore::open(fresh.path);
  const int64_t p2 = ti::open_investigation(s, t2, {});
  const auto none = ti::current_attribution(s, p2);
  EXPECT_EQ(none.verdict.find("No variant is faster"), std::string::npos) << none.verdict;
}

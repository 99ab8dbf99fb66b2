// The autotune search on a simulated objective: it gets within 5 % of the exhaustive grid's best
// for at most a third of the grid's cost, prunes what cannot fit, follows the diagnosis's hints,
// and replaying stored measurements resumes it exactly.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>

#include "core/investigate/autotune.h"

namespace ti = tunebench::investigate;
namespace tc = tunebench::config;

namespace {

tc::TrialConfig base() {
  tc::TrialConfig c;
  c.name = "tune";
  c.device = tc::Device::Cpu;
  c.strategy = tc::Strategy::Ddp;
  c.world_size = 2;
  c.micro_batch = 2;
  return c;
}

ti::TuneSpace space() {
  ti::TuneSpace s;
  for (const char* a : {"micro_batch=1,2,4,8", "grad_accum=1,2,4", "checkpointing=false,true", "num_workers=0,2,4",
                        "compression=none,fp16", "zero=ddp,zero2,zero3"})
    s.axes.push_back(ti::parse_axis(a));
  return s;
}

// A throughput with interactions: bigger batches help until 8 needs checkpointing (which costs
// 25 %); accumulation amortises a communication cost that compression halves; loader threads fix
// a data cost; ZeRO-3 pays for its gathers.
double truth(const tc::TrialConfig& c) {
  const double mb = static_cast<double>(c.micro_batch);
  const double compute = 10.0 * mb * (c.checkpointing ? 1.25 : 1.0);
  const double data = c.num_workers == 0 ? 4.0 * mb : (c.num_workers == 2 ? 0.8 * mb : 0.2 * mb);
  double comm = 12.0 * (c.compression == tc::Compression::None ? 1.0 : 0.55);
  if (c.strategy == tc::Strategy::Fsdp) comm *= c.fsdp_mode == tc::FsdpMode::FullShard ? 1.6 : 1.1;
  const double accum = static_cast<double>(c.grad_accum);
  const double step = accum * (compute + data) + comm + 3.0;
  return accum * mb * 1000.0 / step;
}

ti::Feasible fits() {
  return [](const tc::TrialConfig& c) -> std::optional<std::string> {
    if (c.micro_batch >= 8 && !c.checkpointing && c.strategy == tc::Strategy::Ddp) return "does not fit (simulated)";
    return std::nullopt;
  };
}

ti::Measurement simulate(const tc::TrialConfig& c, std::mt19937_64& rng) {
  std::normal_distribution<double> noise(0.0, 0.01);
  ti::Measurement m;
  m.objective = truth(c) * (1.0 + noise(rng));
  m.cost = static_cast<double>(c.steps) + 4.0;  // steps plus start-up
  return m;
}

}  // namespace

TEST(Autotune, FindsWithinFivePercentOfTheGridOptimumForAThirdOfItsCost) {
  const auto s = space();
  ti::TuneOptions o;
  o.short_steps = 5;
  o.long_steps = 20;
  std::mt19937_64 rng(7);
  const auto result = ti::search(base(), s, o, fits(), [&](const tc::TrialConfig& c) { return simulate(c, rng); });
  ASSERT_TRUE(result.best.has_value());
  ASSERT_FALSE(result.pending.has_value());

  o.exhaustive = true;
  std::mt19937_64 rng2(8);
  const auto grid = ti::search(base(), s, o, fits(), [&](const tc::TrialConfig& c) { return simulate(c, rng2); });
  ASSERT_TRUE(grid.best.has_value());
  double optimum = 0;
  for (const auto& e : grid.evaluations) optimum = std::max(optimum, truth(ti::config_at(base(), s, e.point, 20, 3)));
  const double found = truth(ti::config_at(base(), s, result.best->point, 20, 3));
  EXPECT_GE(found, 0.95 * optimum) << ti::point_label(s, result.best->point);
  EXPECT_LE(result.cost, grid.cost / 3.0) << result.cost << " vs grid " << grid.cost;
  EXPECT_EQ(grid.evaluations.size() + grid.pruned.size(), s.grid_size());
  EXPECT_FALSE(grid.pruned.empty());
  for (const auto& e : result.evaluations) EXPECT_FALSE(fits()(ti::config_at(base(), s, e.point, 20, 3)));
}

TEST(Autotune, ReplayingStoredMeasurementsResumesTheSameSearch) {
  const auto s = space();
  ti::TuneOptions o;
  o.short_steps = 5;
  o.long_steps = 20;
  std::mt19937_64 rng(11);
  std::map<std::string, ti::Measurement> stored;  // what a session would hold, by config
  auto key = [](tc::TrialConfig c) {
    c.name.clear();
    return tc::to_json(c).dump();
  };
  int runs = 0;
  ti::TuneResult r;
  for (;;) {
    r = ti::search(base(), s, o, fits(), [&](const tc::TrialConfig& c) -> std::optional<ti::Measurement> {
      const auto it = stored.find(key(c));
      if (it == stored.end()) return std::nullopt;
      return it->second;
    });
    if (!r.pending) break;
    stored[key(*r.pending)] = simulate(*r.pending, rng);
    ++runs;
  }
  EXPECT_EQ(static_cast<size_t>(runs), r.evaluations.size());  // each measurement asked for once
  std::mt19937_64 rng2(11);
  const auto direct = ti::search(base(), s, o, fits(), [&](const tc::TrialConfig& c) { return simulate(c, rng2); });
  ASSERT_TRUE(direct.best && r.best);
  EXPECT_EQ(direct.best->point, r.best->point);
  EXPECT_DOUBLE_EQ(direct.cost, r.cost);
}

TEST(Autotune, TheBudgetKeepsRoomForTheFinalists) {
  const auto s = space();
  ti::TuneOptions o;
  o.short_steps = 5;
  o.long_steps = 20;
  o.budget_cost = 200;
  std::mt19937_64 rng(3);
  const auto r = ti::search(base(), s, o, fits(), [&](const tc::TrialConfig& c) { return simulate(c, rng); });
  EXPECT_TRUE(r.budget_spent);
  ASSERT_TRUE(r.best.has_value());
  EXPECT_EQ(r.best->steps, 20);  // a finalist, measured long
  EXPECT_LE(r.cost, 200 + 24 * 3);
}

TEST(Autotune, TheDiagnosisHintDecidesWhichAxisIsTriedFirst) {
  const auto s = space();
  ti::TuneOptions o;
  o.max_rounds = 1;
  std::vector<std::string> asked;
  ti::search(base(), s, o, fits(), [&](const tc::TrialConfig& c) {
    asked.push_back(c.name);
    ti::Measurement m;
    m.objective = 1.0;
    m.cost = 1;
    m.hint_keys = {"num_workers"};
    return m;
  });
  ASSERT_GE(asked.size(), 2u);
  EXPECT_NE(asked[1].find("num_workers=2"), std::string::npos) << asked[1];
}

TEST(Autotune, AxesParseAndRejectBadValues) {
  const auto a = ti::parse_axis("zero=ddp,zero3");
  EXPECT_EQ(a.name, "strategy");
  ASSERT_EQ(a.values.size(), 2u);
  EXPECT_EQ(a.values[1].changes.size(), 2u);
  EXPECT_THROW(ti::parse_axis("micro_batch=two"), std::invalid_argument);
  EXPECT_THROW(ti::parse_axis("nonsense"), std::invalid_argument);
  const auto back = ti::space_from_json(ti::to_json(space()));
  EXPECT_EQ(ti::to_json(back), ti::to_json(space()));
}

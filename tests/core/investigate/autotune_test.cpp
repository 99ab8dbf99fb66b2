// The autotune search on a simulated objective: it gets within 5 % of the exhaustive grid's best
// for at most a third of the grid's cost, prunes what cannot fit, follows the diagnosis's hints,
// and replaying stored measurements resumes it exactly.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>

#include "core/investigate/autotune.h"
#include "core/investigate/tune_session.h"

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

namespace {

// A GPU-like cost: every trial pays a start-up far larger than its steps (worker start, NCCL
// rendezvous, warm-up), as the 125m trials on the H200s did (3.5 s for 6 steps, 3.8 s for 14).
ti::Measurement startup_dominated(const tc::TrialConfig& c, std::mt19937_64& rng) {
  auto m = simulate(c, rng);
  m.cost = 30.0 + static_cast<double>(c.steps);
  m.step_cost = 1.0;
  return m;
}

// A model's ranking: the truth with a systematic, point-dependent error of up to +-15 %.
ti::PredictedOrder predicted_order(const ti::TuneSpace& s, double (*objective)(const tc::TrialConfig&) = truth) {
  std::vector<std::pair<double, ti::TunePoint>> scored;
  for (const auto& p : ti::grid_points(s)) {
    double h = 0;
    for (size_t a = 0; a < p.size(); ++a) h += (a + 1) * 0.37 * p[a];
    scored.push_back({objective(ti::config_at(base(), s, p, 20, 3)) * (1.0 + 0.15 * std::sin(h * 7.1)), p});
  }
  std::stable_sort(scored.begin(), scored.end(), [](const auto& x, const auto& y) { return x.first > y.first; });
  ti::PredictedOrder order;
  for (auto& [v, p] : scored) order.push_back(p);
  return order;
}

}  // namespace

// An interaction one-knob moves cannot see: micro-batch 4 alone runs out of headroom under DDP
// and ZeRO-2 alone pays for its extra collectives, but together they are the fastest (as the
// H200 space's best, mb 16 with ZeRO-2 and fused kernels, was).
double trap(const tc::TrialConfig& c) {
  const bool zero2 = c.strategy == tc::Strategy::Fsdp;
  double v = 100;
  if (c.micro_batch == 4) v = zero2 ? 160 : 90;
  else if (zero2) v = 85;
  if (c.compression != tc::Compression::None) v *= 1.05;
  if (c.num_workers > 0) v *= 1.10;
  return v;
}

TEST(Autotune, PredictedSeedsFindTheOptimumWhenStartUpDominatesTheCost) {
  // 24 points, as the H200 run's space; every trial's cost is mostly start-up.
  ti::TuneSpace s;
  for (const char* a : {"micro_batch=1,2,4", "compression=none,fp16", "zero=ddp,zero2", "num_workers=0,2"})
    s.axes.push_back(ti::parse_axis(a));
  const auto none = [](const tc::TrialConfig&) -> std::optional<std::string> { return std::nullopt; };
  auto measure = [](std::mt19937_64& rng) {
    return [&rng](const tc::TrialConfig& c) {
      std::normal_distribution<double> noise(0.0, 0.01);
      ti::Measurement m;
      m.objective = trap(c) * (1.0 + noise(rng));
      m.cost = 30.0 + static_cast<double>(c.steps);
      m.step_cost = 1.0;
      return m;
    };
  };
  const auto order = predicted_order(s, trap);  // the truth, up to +-15 % off

  ti::TuneOptions o;
  o.short_steps = 6;
  o.long_steps = 14;
  o.finalists = 2;
  o.exhaustive = true;
  std::mt19937_64 rng0(5);
  const auto grid = ti::search(base(), s, o, none, measure(rng0));
  double optimum = 0;
  for (const auto& p : ti::grid_points(s)) optimum = std::max(optimum, trap(ti::config_at(base(), s, p, 14, 3)));
  o.exhaustive = false;
  o.budget_cost = grid.cost / 3.0;  // the target: at most a third of the grid's time

  std::mt19937_64 rng(5);
  const auto seeded = ti::search(base(), s, o, none, measure(rng), order);
  ASSERT_TRUE(seeded.best.has_value());
  EXPECT_FALSE(seeded.pending.has_value());
  EXPECT_EQ(seeded.best->steps, 14);
  EXPECT_LE(seeded.cost, o.budget_cost) << "grid " << grid.cost;
  EXPECT_GE(trap(ti::config_at(base(), s, seeded.best->point, 14, 3)), 0.95 * optimum)
      << ti::point_label(s, seeded.best->point);

  // From the base alone, one knob at a time, the same budget ends in the trap.
  std::mt19937_64 rng2(5);
  const auto unseeded = ti::search(base(), s, o, none, measure(rng2));
  ASSERT_TRUE(unseeded.best.has_value());
  EXPECT_LT(trap(ti::config_at(base(), s, unseeded.best->point, 14, 3)), 0.95 * optimum)
      << ti::point_label(s, unseeded.best->point);
}

TEST(Autotune, TheBudgetCountsStartUpOnceNotPerStep) {
  // Short 5 steps cost 35, long 12 steps cost 42: a long trial is not 12/5 short ones.
  const auto s = space();
  ti::TuneOptions o;
  o.short_steps = 5;
  o.long_steps = 12;
  o.finalists = 2;
  o.budget_cost = 230;  // room for 4 short trials and 2 long ones; a per-step estimate (84 a long one) allows 1 short
  std::mt19937_64 rng(9);
  const auto r = ti::search(base(), s, o, fits(), [&](const tc::TrialConfig& c) { return startup_dominated(c, rng); });
  size_t shorts = 0, longs = 0;
  for (const auto& e : r.evaluations) (e.steps == 5 ? shorts : longs) += 1;
  EXPECT_EQ(ti::rung_steps(o), (std::vector<int64_t>{5, 12}));
  EXPECT_EQ(shorts, 4u);
  EXPECT_EQ(longs, 2u);
  EXPECT_LE(r.cost, o.budget_cost);
  EXPECT_TRUE(r.budget_spent);
}

TEST(Autotune, RungsGrowByEtaAndEachKeepsTheBestOfTheLast) {
  ti::TuneOptions o;
  o.short_steps = 4;
  o.long_steps = 40;
  o.finalists = 2;
  EXPECT_EQ(ti::rung_steps(o), (std::vector<int64_t>{4, 12, 36, 40}));
  o.long_steps = 4;
  EXPECT_EQ(ti::rung_steps(o), (std::vector<int64_t>{4}));

  o.long_steps = 40;
  o.seeds = 9;
  const auto s = space();
  std::mt19937_64 rng(2);
  const auto r = ti::search(base(), s, o, fits(), [&](const tc::TrialConfig& c) { return simulate(c, rng); },
                            predicted_order(s));
  std::map<int64_t, std::vector<ti::Evaluated>> by_rung;
  for (const auto& e : r.evaluations) by_rung[e.steps].push_back(e);
  ASSERT_EQ(by_rung.size(), 4u);
  const size_t n0 = by_rung[4].size();
  EXPECT_EQ(by_rung[12].size(), std::max<size_t>(2, (n0 + 2) / 3));
  EXPECT_EQ(by_rung[40].size(), 2u);
  // Every point of a rung was among the best of the rung below.
  for (const auto& [steps, list] : by_rung) {
    if (steps == 4) continue;
    const int64_t below = steps == 12 ? 4 : steps == 36 ? 12 : 36;
    auto lower = by_rung[below];
    std::sort(lower.begin(), lower.end(), [](const auto& x, const auto& y) { return x.m.objective > y.m.objective; });
    std::vector<ti::TunePoint> top;
    for (size_t i = 0; i < list.size(); ++i) top.push_back(lower[i].point);
    for (const auto& e : list) EXPECT_NE(std::find(top.begin(), top.end(), e.point), top.end()) << steps;
  }
  ASSERT_TRUE(r.best.has_value());
  EXPECT_EQ(r.best->steps, 40);
}

TEST(Autotune, OneGpuSpacesTryBf16WeightGradientsWhereTheyRun) {
  tc::TrialConfig one = *tc::trial_preset("7b-single-fused");
  const auto has = [](const ti::TuneSpace& s, const std::string& name) {
    for (const auto& a : s.axes)
      if (a.name == name) return true;
    return false;
  };
  const ti::TuneSpace s = ti::default_space(one, true);
  ASSERT_TRUE(has(s, "grad_dtype"));
  EXPECT_FALSE(has(ti::default_space(one, false), "grad_dtype")) << "the CPU has no AdamW kernel to read them";
  tc::TrialConfig ddp = *tc::trial_preset("7b-ddp");
  EXPECT_FALSE(has(ti::default_space(ddp, true), "grad_dtype"));
  // Its bf16 points are feasible only where config::validate lets them run: fused and bf16.
  const ti::Feasible feasible = ti::feasibility(ti::TuneSpec{one, s, {}});
  size_t ok = 0, refused = 0;
  for (const auto& p : ti::grid_points(s)) {
    const tc::TrialConfig c = ti::config_at(one, s, p, 10, 2);
    if (c.grad_dtype != tc::DType::Bf16) continue;
    const auto why = feasible(c);
    const bool runs = c.compile == tc::Compile::Fused && c.amp == tc::Amp::Bf16;
    EXPECT_EQ(!why.has_value(), runs) << ti::point_label(s, p) << ": " << why.value_or("feasible");
    (why ? refused : ok) += 1;
  }
  EXPECT_GT(ok, 0u);
  EXPECT_GT(refused, 0u);
}

// The second objective: of the finalists within X % of the fastest, the most tokens per joule; the
// fastest when one of them has no energy figure, saying why.
TEST(Autotune, CheapestWithinAShareOfTheFastestPicksTheMostTokensPerJoule) {
  auto finalist = [](int label, double tokens_per_s, std::optional<double> per_joule) {
    ti::Evaluated e;
    e.point = {label};
    e.steps = 20;
    e.m.objective = tokens_per_s;
    e.m.tokens_per_joule = per_joule;
    if (!per_joule) e.m.energy_problem = "rank 0: no energy readings";
    return e;
  };
  const std::vector<ti::Evaluated> list = {finalist(0, 1000, 2.0), finalist(1, 960, 2.6), finalist(2, 900, 3.5)};
  std::string why;
  auto best = ti::cheapest_within(list, 0.05, &why);
  ASSERT_TRUE(best);
  EXPECT_EQ(best->point, ti::TunePoint{1}) << "900 tokens/s is 10 % slower than the fastest: out";
  EXPECT_NE(why.find("the most tokens per joule (2.6)"), std::string::npos) << why;
  best = ti::cheapest_within(list, 0.15, &why);
  EXPECT_EQ(best->point, ti::TunePoint{2});
  const std::vector<ti::Evaluated> unknown = {finalist(0, 1000, 2.0), finalist(1, 990, std::nullopt)};
  best = ti::cheapest_within(unknown, 0.05, &why);
  EXPECT_EQ(best->point, ti::TunePoint{0});
  EXPECT_NE(why.find("has no energy figure (rank 0: no energy readings)"), std::string::npos) << why;
  EXPECT_FALSE(ti::cheapest_within({}, 0.05, &why));
}

TEST(Autotune, TheSearchEndsOnTheCheapestFinalistWhenAskedTo) {
  // A simulated space where larger micro-batches are faster but burn more energy per token.
  tc::TrialConfig base;
  base.micro_batch = 2;
  ti::TuneSpace space;
  space.axes.push_back(ti::parse_axis("micro_batch=2,4,8"));
  ti::TuneOptions o;
  o.exhaustive = true;
  o.cheapest_within = 0.10;
  const ti::Lookup lookup = [](const tc::TrialConfig& c) {
    ti::Measurement m;
    m.objective = c.micro_batch == 8 ? 1000 : c.micro_batch == 4 ? 950 : 700;
    m.tokens_per_joule = c.micro_batch == 8 ? 2.0 : c.micro_batch == 4 ? 3.0 : 4.0;
    m.cost = 1;
    return std::optional<ti::Measurement>(m);
  };
  const auto r = ti::search(base, space, o, [](const tc::TrialConfig&) { return std::optional<std::string>(); }, lookup);
  ASSERT_TRUE(r.best);
  EXPECT_EQ(ti::point_label(space, r.best->point), ti::point_label(space, {1}));  // micro_batch 4
  EXPECT_NE(r.choice.find("within 10 % of the fastest"), std::string::npos) << r.choice;
}

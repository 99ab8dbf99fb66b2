// A small real investigation with the real CPU worker (tiny custom model, headless through
// launch::run_trial): a planted per-sample CPU cost with no loader threads makes the step
// data-bound: the plan must try loader threads first, run every variant through the real worker and
// store it, and, on a machine quiet enough that two baseline runs agree within 25 %, rank the
// loader-thread variant first, beyond the noise, with the data wait as the phase it moved. On a
// saturated machine the loader threads have no free core to run on and the honest answer is "within
// the noise": the timing part is then skipped with the measured noise as the reason (timings are
// asserted only where the measurement can carry them; docs/INVESTIGATE.md).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/investigate/headless_executor.h"
#include "core/investigate/investigation.h"
#include "core/investigate/plan_run.h"
#include "core/store/session_store.h"

#ifdef TUNEBENCH_WORKER

namespace ti = tunebench::investigate;
namespace tc = tunebench::config;
namespace ts = tunebench::store;

namespace {
// The CPU time the machine left to normal-priority work so far, and its total (/proc/stat's first
// line, in ticks): idle and iowait, plus the time of niced work, which yields to ours (the fuzzers'
// build runs beside the suite at nice 19 in the idle class: scripts/tunebench.sh).
struct CpuTicks {
  long long idle = 0, total = 0;
};
CpuTicks machine_cpu() {
  std::ifstream f("/proc/stat");
  std::string cpu;
  f >> cpu;
  CpuTicks t;
  long long v = 0;
  for (int i = 0; i < 8 && f >> v; ++i) {
    t.total += v;
    if (i == 1 || i == 3 || i == 4) t.idle += v;  // nice, idle, iowait
  }
  return t;
}
}  // namespace

TEST(RealWorker, DataBoundTinyTrialRanksNumWorkersFirst) {
  const auto dir = std::filesystem::temp_directory_path() / ("tb-investigate-real-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "s.tbsession").string();
  ts::SessionStore::create(path, "real");
  tc::TrialConfig c;
  c.name = "tiny, data-bound";
  c.device = tc::Device::Cpu;
  c.model = "custom";
  c.dims = {64, 2, 2, 128, 512};
  c.seq_len = 32;
  c.micro_batch = 4;
  c.sample_cpu_us = 10000;  // 40 ms of hashing per step on the training thread
  c.steps = 10;
  c.warmup = 2;
  ASSERT_TRUE(tc::validate(c).empty()) << tc::describe(tc::validate(c));
  const auto exec = ti::headless_executor(path, TUNEBENCH_WORKER, "test", 120);
  const auto first = exec({c, c.name, {}});
  ASSERT_EQ(first.status, tunebench::protocol::TrialStatus::Done) << first.message;
  int64_t plan = 0;
  {
    auto s = ts::SessionStore::open(path);
    plan = ti::open_investigation(s, first.trial_id, {});
  }
  ti::Budget b;
  b.max_trials = 8;
  std::vector<std::string> lines;
  const auto cpu0 = machine_cpu();
  ti::run_plan(path, {plan, ti::PlanKind::Investigate, b}, exec, [&](const std::string& l) { lines.push_back(l); });
  auto session = ts::SessionStore::open(path);
  const auto a = ti::current_attribution(session, plan);
  const auto cpu1 = machine_cpu();
  std::filesystem::remove_all(dir);
  ASSERT_FALSE(a.factors.empty());
  EXPECT_TRUE(a.not_run.empty()) << ti::render(a);  // the budget covered the plan
  EXPECT_EQ(a.baseline_repeats, 2);
  EXPECT_FALSE(a.has_communication_factor());
  EXPECT_FALSE(lines.empty());
  bool data_factor = false;
  for (const auto& f : a.factors) {
    EXPECT_FALSE(f.failed) << f.title << ": " << f.failure;
    data_factor = data_factor || (f.category == ti::Category::Data && f.title.find("num_workers") != std::string::npos);
  }
  EXPECT_TRUE(data_factor) << ti::render(a);
  // Under load a single run of a variant can move by more than its effect (seen: 16.8 % noise,
  // micro_batch 8 measured once at +136 % [+10, +278]): the ranking is asserted only on a quiet machine.
  if (a.noise_floor >= 0.10)
    GTEST_SKIP() << "the machine is too busy for the timing part: two baseline runs differ by "
                 << a.noise_floor * 100 << " %\n" << ti::render(a);
  // Loader threads help only where a core is free for them: with a CPU hog on both cores, four of
  // them starved the training thread (num_workers 4 measured -82 %, seen in suite-under-load).
  const double idle = cpu1.total > cpu0.total ? double(cpu1.idle - cpu0.idle) / double(cpu1.total - cpu0.total) : 1.0;
  if (idle < 0.2)
    GTEST_SKIP() << "no spare CPU for loader threads: the machine was idle (or running niced work) "
                 << idle * 100 << " % of the investigation\n" << ti::render(a);
  EXPECT_EQ(a.factors.front().category, ti::Category::Data) << ti::render(a);
  EXPECT_TRUE(a.factors.front().effect.beyond_noise) << ti::render(a);
  // Which phase the fix moved needs a baseline that is data-bound as set up (40 ms of hashing in a
  // step of ~50). With a CPU hog on both cores the tiny model's own phases stretched to 300 ms
  // (backward 189 ms, data wait a tenth of the step; seen in scripts/suite-under-load.sh), and the
  // loader threads then moved the backward most.
  const auto& base = a.baseline.breakdown;
  if (base[tunebench::analysis::Part::DataWait] < 0.25 * base.step_ms)
    GTEST_SKIP() << "the machine is too busy for the phase part: the baseline's data wait is "
                 << base[tunebench::analysis::Part::DataWait] << " of " << base.step_ms << " ms\n" << ti::render(a);
  EXPECT_EQ(a.factors.front().phase_moved, "data wait") << ti::render(a);
}

#endif

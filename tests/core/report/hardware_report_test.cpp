// The reports' "What the hardware says": energy and activity as metrics/ defines them, the
// measured memory categories beside the prediction's, an out-of-memory explained by
// predict::explain_oom, and for a CPU trial the worker's reason instead of numbers.
#include <gtest/gtest.h>

#include <sstream>

#include "core/analysis/format.h"
#include "core/metrics/energy.h"
#include "core/metrics/gpu_counters.h"
#include "core/predict/memory_explain.h"
#include "core/report/html_text.h"
#include "core/report/report.h"

namespace tr = tunebench::report;
namespace ts = tunebench::store;
namespace tp = tunebench::protocol;
namespace tc = tunebench::config;
namespace tpd = tunebench::predict;

namespace {

constexpr int64_t kHwGiB = int64_t{1} << 30;

tc::TrialConfig hw_config() {
  tc::TrialConfig c = *tc::trial_preset("7b-single");
  c.checkpointing = false;
  c.steps = 12;
  c.warmup = 2;
  return c;
}

// A 12-step trial of one H100 at 600 W with GPM activity, step 10 memory-sampled.
ts::LoadedTrial gpu_trial(const std::string& name, bool oom) {
  ts::LoadedTrial t;
  t.info.id = oom ? 2 : 1;
  t.info.name = name;
  t.info.status = oom ? ts::TrialStatus::Failed : ts::TrialStatus::Done;
  const tc::TrialConfig c = hw_config();
  t.info.config = tc::to_json(c);
  auto& r = t.log.ranks[0];
  tp::Hello h;
  h.device = "NVIDIA H100 80GB HBM3";
  h.device_kind = "cuda";
  h.device_memory_bytes = 80 * kHwGiB;
  h.torch = "2.11.0";
  h.config = tc::to_json(c);
  r.hello = h;
  const int steps = oom ? 1 : 12;
  for (int i = 0; i < steps; ++i) {
    tp::Step s;
    s.step = i;
    s.warmup = i < 2;
    s.start_us = 1'000'000'000 + i * 1'000'000;
    s.end_us = s.start_us + 1'000'000;
    s.step_ms = 1000;
    s.tokens = c.tokens_per_rank_step();
    s.memory.peak_bytes = 60 * kHwGiB;
    if (i == 10) {
      s.memory_sampled = true;
      s.memory_categories = {"backward", 13 * kHwGiB, 13 * kHwGiB, 26 * kHwGiB, 3 * kHwGiB, kHwGiB, 0, kHwGiB / 2, kHwGiB};
    }
    r.steps.push_back(s);
  }
  for (int k = 0; k <= 130 && !oom; ++k) {
    tp::GpuSample g;
    g.index = 0;
    g.power_w = 600;
    g.counters.energy_mj = 7'000'000'000 + static_cast<int64_t>(600.0 * 100 * k);  // 600 W, read every 100 ms
    g.counters.sm_activity_pct = 80 + k % 3;
    g.counters.tensor_activity_pct = 40 + k % 2;
    r.samples.push_back({1'000'000'000 + k * 100'000, g});
  }
  if (oom) {
    tp::MemoryCategories m{"backward", 13 * kHwGiB, 13 * kHwGiB, 26 * kHwGiB, 40 * kHwGiB, kHwGiB, 0, 0, 0};
    tp::Error e{"oom", "out of GPU memory", {{"memory_categories", tp::memory_categories_to_json(m)},
                                             {"oom_phase", "backward"}, {"oom_step", 0}, {"requested_bytes", 2 * kHwGiB}}};
    r.errors.push_back({1'000'500'000, e});
  }
  return t;
}

ts::LoadedTrial cpu_trial() {
  ts::LoadedTrial t;
  t.info.id = 3;
  t.info.name = "cpu tiny";
  t.info.status = ts::TrialStatus::Done;
  tc::TrialConfig c;
  t.info.config = tc::to_json(c);
  auto& r = t.log.ranks[0];
  tp::Hello h;
  h.device = "cpu";
  h.device_kind = "cpu";
  h.config = tc::to_json(c);
  r.hello = h;
  for (int i = 0; i < 5; ++i) {
    tp::Step s;
    s.step = i;
    s.warmup = i < 1;
    s.start_us = 1'000'000 + i * 100'000;
    s.end_us = s.start_us + 100'000;
    s.step_ms = 100;
    s.tokens = 512;
    r.steps.push_back(s);
  }
  r.warnings.push_back({0, tp::Warning{"memory-categories", "memory categories unknown on CPU: they come from the "
                                                            "CUDA caching allocator's blocks"}});
  return t;
}

std::string render_hw(const std::vector<ts::LoadedTrial>& trials, tr::ReportFormat format) {
  std::ostringstream out;
  tr::ReportOptions options;
  options.embed_session = false;
  tr::write_report(trials, format, out, options);
  return out.str();
}

}  // namespace

TEST(HardwareReport, EnergyActivityAndMemoryAreTheDefinitionsOwn) {
  const std::vector<ts::LoadedTrial> trials = {gpu_trial("h100 7b", false), cpu_trial()};
  const std::string html = render_hw(trials, tr::ReportFormat::Html);
  ASSERT_NE(html.find("id=\"hardware\""), std::string::npos);
  const auto e = tunebench::metrics::trial_energy(trials[0].log);
  ASSERT_TRUE(e.ok()) << e.problem;
  EXPECT_NEAR(e.joules_per_step, 600.0, 600.0 * e.error_bound);
  EXPECT_NE(html.find(tunebench::analysis::format_count(e.joules_per_step) + " J per step, " +
                      tunebench::analysis::format_fixed(e.tokens_per_joule, 1) + " tokens/J"),
            std::string::npos);
  const auto a = tunebench::metrics::trial_activity(trials[0].log);
  EXPECT_NE(html.find("SM " + tunebench::analysis::format_fixed(*a.sm_activity_pct, 0) + " %, tensor cores " +
                      tunebench::analysis::format_fixed(*a.tensor_activity_pct, 0) + " %"),
            std::string::npos);
  // Memory: each category measured beside the prediction's bytes for it.
  const auto cmp = tpd::compare_memory(trials[0].log.ranks.at(0).steps[10].memory_categories,
                                       tpd::predict_memory(hw_config(), [] {
                                         tpd::MemoryOptions o;
                                         o.device_memory_bytes = 80 * kHwGiB;
                                         return o;
                                       }()));
  EXPECT_NE(html.find("memory at the end of the backward of step 10 (rank 0)"), std::string::npos);
  for (const auto& row : cmp.rows)
    EXPECT_NE(html.find("<tr><th>" + row.category + "</th><td>" +
                        tunebench::analysis::format_gib(static_cast<double>(row.measured_bytes)) + "</td><td>" +
                        tunebench::analysis::format_gib(static_cast<double>(row.predicted_bytes)) + "</td>"),
              std::string::npos)
        << row.category;
  // The CPU trial: the worker's words, no numbers.
  EXPECT_NE(html.find("memory categories memory categories unknown on CPU"), std::string::npos);
  EXPECT_NE(html.find("energy" ), std::string::npos);
  EXPECT_NE(html.find("unknown: rank 0: no energy readings"), std::string::npos);

  const std::string md = render_hw(trials, tr::ReportFormat::Markdown);
  EXPECT_NE(md.find("**What the hardware says**"), std::string::npos);
  EXPECT_NE(md.find("memory categories unknown on CPU"), std::string::npos);
  EXPECT_NE(md.find("memory at the backward of step 10:"), std::string::npos);
}

TEST(HardwareReport, AnOutOfMemoryIsExplainedWithItsFix) {
  const std::vector<ts::LoadedTrial> trials = {gpu_trial("h100 7b oom", true)};
  const auto& details = trials[0].log.ranks.at(0).errors.at(0).value.details;
  tpd::MemoryOptions o;
  o.device_memory_bytes = 80 * kHwGiB;
  const auto expected = tpd::explain_oom(hw_config(), details, 80 * kHwGiB, o);
  ASSERT_TRUE(expected);
  EXPECT_EQ(expected->category, "activations");
  const std::string html = render_hw(trials, tr::ReportFormat::Html);
  EXPECT_NE(html.find(tr::html_escape(expected->text)), std::string::npos) << expected->text;
  ASSERT_FALSE(expected->fixes.empty());
  EXPECT_NE(html.find(tr::html_escape(expected->fixes.front().change)), std::string::npos);
  const std::string md = render_hw(trials, tr::ReportFormat::Markdown);
  EXPECT_NE(md.find("Out of memory in the backward of step 0: activations held"), std::string::npos) << md;
}

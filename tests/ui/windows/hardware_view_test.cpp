// What the hardware says, in the trial view: SM and tensor-core activity plotted beside NVML's
// utilisation or the worker's reason as the plot's note, and the memory strip under the plots with
// the measured categories beside the prediction (the core's own line), the CPU's reason, or an
// out-of-memory explained.
#include <gtest/gtest.h>

#include "core/predict/memory_explain.h"
#include "ui/plots/telemetry_plot.h"
#include "ui/windows/hardware_strip.h"

namespace tu = tunebench::ui;
namespace tp = tunebench::protocol;
namespace tc = tunebench::config;
namespace tpd = tunebench::predict;

namespace {

constexpr int64_t kStripGiB = int64_t{1} << 30;

tp::Event event(int64_t t, tp::Payload p) { return tp::Event{{tp::kSchemaVersion, "t", 0, t}, std::move(p)}; }

tc::TrialConfig strip_config() {
  tc::TrialConfig c = *tc::trial_preset("7b-single");
  c.checkpointing = false;
  return c;
}

tp::Hello gpu_hello() {
  tp::Hello h;
  h.device = "NVIDIA H200";
  h.device_kind = "cuda";
  h.device_memory_bytes = 140 * kStripGiB;
  h.torch = "2.11.0";
  h.config = tc::to_json(strip_config());
  return h;
}

}  // namespace

TEST(HardwareView, ActivityIsPlottedBesideUtilisationOrTheReasonIsTheNote) {
  tu::TelemetryPlot plot;
  plot.resize(600, 400);
  tu::EventBatch batch;
  for (int k = 0; k < 4; ++k) {
    tp::GpuSample g;
    g.index = 0;
    g.util_pct = 100;
    if (k > 0) {
      g.counters.sm_activity_pct = 70;
      g.counters.tensor_activity_pct = 30;
    }
    batch.push_back(event(1000 + k * 100'000, g));
  }
  plot.addEvents(batch);
  plot.replotIfDirty();
  EXPECT_EQ(plot.samples("GPU 0", 0), 4);
  EXPECT_EQ(plot.activityPoints(0, false), 3);
  EXPECT_EQ(plot.activityPoints(0, true), 3);
  EXPECT_EQ(plot.note(), "");

  plot.clear();
  EXPECT_EQ(plot.activityPoints(0, false), 0);
  tu::EventBatch without;
  tp::GpuSample g;
  g.index = 0;
  g.util_pct = 90;
  without.push_back(event(1000, g));
  without.push_back(event(2000, tp::Warning{"gpm", "SM and tensor-core activity unavailable: this GPU has no GPM "
                                                   "counters (NVML GPM needs a Hopper or newer GPU)"}));
  plot.addEvents(without);
  plot.replotIfDirty();
  EXPECT_EQ(plot.note().toStdString(),
            "SM and tensor-core activity unavailable: this GPU has no GPM counters (NVML GPM needs a Hopper or newer GPU)");
}

TEST(HardwareView, TheStripShowsTheMeasuredCategoriesBesideThePrediction) {
  tu::HardwareStrip strip;
  EXPECT_TRUE(strip.isHidden());
  tp::Step s;
  s.step = 13;
  s.memory_sampled = true;
  s.memory_categories = {"backward", 13 * kStripGiB, 13 * kStripGiB, 50 * kStripGiB, 20 * kStripGiB, kStripGiB, 0, 0, 2 * kStripGiB};
  strip.addEvents({event(1, gpu_hello()), event(2, s)});
  tpd::MemoryOptions o;
  o.device_memory_bytes = 140 * kStripGiB;
  const auto cmp = tpd::compare_memory(s.memory_categories, tpd::predict_memory(strip_config(), o));
  std::string expected = tpd::memory_line(cmp, "backward", 13, 2 * kStripGiB);
  expected[0] = 'M';
  EXPECT_EQ(strip.text().toStdString(), expected);
  EXPECT_FALSE(strip.isHidden());
  strip.clear();
  EXPECT_TRUE(strip.text().isEmpty());
}

TEST(HardwareView, TheStripGivesTheCpusReasonAndExplainsAnOutOfMemory) {
  tu::HardwareStrip strip;
  tp::Hello cpu;
  cpu.device_kind = "cpu";
  cpu.config = tc::to_json(tc::TrialConfig{});
  strip.addEvents({event(1, cpu), event(2, tp::Warning{"memory-categories", "memory categories unknown on CPU: no caching allocator"})});
  EXPECT_EQ(strip.text().toStdString(), "memory categories unknown on CPU: no caching allocator");

  tu::HardwareStrip oom;
  tp::MemoryCategories m{"backward", 13 * kStripGiB, 13 * kStripGiB, 50 * kStripGiB, 90 * kStripGiB, 0, 0, 0, 0};
  const nlohmann::json details = {{"memory_categories", tp::memory_categories_to_json(m)}, {"oom_step", 0}};
  oom.addEvents({event(1, gpu_hello()), event(2, tp::Error{"oom", "out of GPU memory", details})});
  tpd::MemoryOptions o;
  o.device_memory_bytes = 140 * kStripGiB;
  const auto x = tpd::explain_oom(strip_config(), details, 140 * kStripGiB, o);
  ASSERT_TRUE(x);
  EXPECT_EQ(oom.text().toStdString(), x->text);
}

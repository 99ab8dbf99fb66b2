// What the hardware says, in the trial view: SM and tensor-core activity plotted beside NVML's
// utilisation or the worker's reason as the plot's note, the memory strip under the plots with
// the measured categories beside the prediction (the core's own line), the CPU's reason, or an
// out-of-memory explained; and memory through a sampled step (the step's memory timeline) or the
// reason there is none.
#include <gtest/gtest.h>

#include <QLineEdit>

#include "core/predict/memory_explain.h"
#include "ui/plots/memory_timeline_plot.h"
#include "ui/plots/telemetry_plot.h"
#include "ui/windows/hardware_strip.h"
#include "ui/windows/live_view.h"
#include "tests/core/protocol/memory_timeline_fixture.h"

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

namespace {

// A memory-sampled step of rank `rank` with the nine points a CUDA worker sends; `gib` scales it.
tp::Step sampled_step(int64_t index, int64_t gib) {
  tp::Step s;
  s.step = index;
  s.memory_timeline = tunebench::testing::nine_memory_points(gib);
  return s;
}

tp::Event ranked(int rank, int64_t t, tp::Payload p) { return tp::Event{{tp::kSchemaVersion, "t", rank, t}, std::move(p)}; }

}  // namespace

TEST(HardwareView, MemoryThroughASampledStepPlotsItsPointsAndPeaks) {
  tu::MemoryTimelinePlot plot;
  plot.resize(500, 260);
  tp::Step unsampled;
  unsampled.step = 11;
  plot.addEvents({event(1, gpu_hello()), event(2, unsampled), event(3, sampled_step(12, kStripGiB))});
  plot.replotIfDirty();
  EXPECT_EQ(plot.note(), "");
  EXPECT_EQ(plot.shownStep(), 12);
  EXPECT_EQ(plot.allocatedPoints(), 6);  // each phase's start and end
  EXPECT_EQ(plot.reservedPoints(), 6);
  EXPECT_EQ(plot.peakMarks(), 3);        // one per phase
  EXPECT_DOUBLE_EQ(plot.largestPeakGiB(), 58.0);
  const QCPAxis* x = plot.axisRects().front()->axis(QCPAxis::atBottom);
  EXPECT_EQ(x->label(), "memory through step 12 of rank 0: host time (ms)");
  EXPECT_EQ(x->tickVectorLabels().front(), "0.1");  // the forward's start
  EXPECT_EQ(x->tickVectorLabels().back(), "268.0");  // the optimizer's end

  // The latest sampled step replaces it; an older one arriving late does not.
  plot.addEvents({event(4, sampled_step(14, 2 * kStripGiB)), event(5, sampled_step(13, kStripGiB))});
  plot.replotIfDirty();
  EXPECT_EQ(plot.shownStep(), 14);
  EXPECT_DOUBLE_EQ(plot.largestPeakGiB(), 116.0);

  // Another rank: its own step, or why it has none.
  plot.setRank(1);
  plot.replotIfDirty();
  EXPECT_EQ(plot.shownStep(), -1);
  EXPECT_EQ(plot.note().toStdString(), "Rank 1 has no memory-sampled step yet; rank 0 has.");
  plot.addEvents({ranked(1, 6, sampled_step(14, kStripGiB / 2))});
  plot.replotIfDirty();
  EXPECT_EQ(plot.note(), "");
  EXPECT_DOUBLE_EQ(plot.largestPeakGiB(), 29.0);

  plot.clear();
  plot.setComplete(true);
  plot.replotIfDirty();
  EXPECT_EQ(plot.allocatedPoints(), 0);
  EXPECT_EQ(plot.peakMarks(), 0);
  EXPECT_FALSE(plot.note().isEmpty());
}

TEST(HardwareView, MemoryThroughASampledStepSaysWhyThereIsNone) {
  {  // The CPU worker's own words.
    tu::MemoryTimelinePlot plot;
    tp::Hello cpu;
    cpu.device_kind = "cpu";
    cpu.config = tc::to_json(tc::TrialConfig{});
    plot.addEvents({event(1, cpu), event(2, tp::Warning{"memory-timeline", "memory timeline unknown on CPU: no caching "
                                                                           "allocator"})});
    plot.replotIfDirty();
    EXPECT_EQ(plot.note().toStdString(), "memory timeline unknown on CPU: no caching allocator");
    EXPECT_EQ(plot.allocatedPoints(), 0);
  }
  {  // A CPU trial of a worker that did not say so.
    tu::MemoryTimelinePlot plot;
    tp::Hello cpu;
    cpu.device_kind = "cpu";
    plot.addEvents({event(1, cpu)});
    plot.replotIfDirty();
    EXPECT_EQ(plot.note().left(31).toStdString(), "Memory timeline unknown on CPU:");
  }
  tc::TrialConfig c = strip_config();
  c.warmup = 3;
  c.steps = 40;
  auto note_for = [](const tc::TrialConfig& config, bool complete) {
    tu::MemoryTimelinePlot plot;
    tp::Hello h = gpu_hello();
    h.config = tc::to_json(config);
    plot.addEvents({event(1, h)});
    plot.setComplete(complete);
    plot.replotIfDirty();
    return plot.note().toStdString();
  };
  EXPECT_EQ(note_for(c, false), "No memory-sampled step yet: the first is step 3 (then 2 of every 20 steps).");
  EXPECT_EQ(note_for(c, true).rfind("No step of this trial carries a memory timeline", 0), 0u) << note_for(c, true);
  tc::TrialConfig off = c;
  off.kernel_sample_every = 0;
  EXPECT_EQ(note_for(off, false).rfind("No memory-sampled step: kernel sampling is off for this trial", 0), 0u)
      << note_for(off, false);
  tc::TrialConfig graph = c;
  graph.compile = tc::Compile::Graph;
  EXPECT_EQ(note_for(graph, false).rfind("No memory-sampled step: compile 'graph' runs its measured steps as a CUDA "
                                         "graph",
                                         0),
            0u)
      << note_for(graph, false);
  // A script (tunebench_probe): never a timeline, whatever its sampling; said so, not "yet".
  tc::TrialConfig script = c;
  script.script = "/home/alice/train.py";
  EXPECT_EQ(note_for(script, false).rfind("No memory timeline for a script: tunebench_probe reads", 0), 0u)
      << note_for(script, false);
}

TEST(HardwareView, TheTrialViewShowsMemoryThroughASampledStepOfTheFirstRankShown) {
  tu::LiveView view;
  view.resize(1000, 700);
  tu::MemoryTimelinePlot* plot = view.memoryTimeline();
  ASSERT_NE(plot, nullptr);
  view.addEvents({event(1, gpu_hello()), ranked(1, 1, gpu_hello()), event(2, sampled_step(12, kStripGiB)),
                  ranked(1, 3, sampled_step(12, 3 * kStripGiB))});
  view.replotNow();
  EXPECT_EQ(plot->rank(), 0);
  EXPECT_DOUBLE_EQ(plot->largestPeakGiB(), 58.0);
  view.rankFilterField()->setText("1-3");
  view.replotNow();
  EXPECT_EQ(plot->rank(), 1);
  EXPECT_DOUBLE_EQ(plot->largestPeakGiB(), 174.0);
  view.rankFilterField()->clear();
  view.replotNow();
  EXPECT_EQ(plot->rank(), 0);
}

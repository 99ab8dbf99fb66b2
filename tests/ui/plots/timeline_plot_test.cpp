// Issue 44: the timeline's legend in the words of the trial. It said "GPU idle: ..." on CPU trials
// and listed every phase (four rows of a laptop's timeline): it lists the phases drawn, and an idle
// phase of a CPU trial is named with config::device_noun, the one definition of device words.
#include <gtest/gtest.h>

#include "core/config/trial_config.h"
#include "tests/ui/fake_events.h"
#include "ui/plots/phase_legend_item.h"
#include "ui/plots/phase_style.h"
#include "ui/plots/timeline_plot.h"

using namespace tunebench;
using namespace tunebench::ui;

namespace timeline_plot_test {

// Four steps of `preset` on its ranks, said hello to from the CPU or a GPU; `idle` adds a
// host-wait gap on rank 0's compute lane to each step.
EventBatch trial(const char* preset, bool gpu, bool idle = false) {
  const config::TrialConfig c = *config::trial_preset(preset);
  EventBatch batch;
  for (int r = 0; r < c.world_size; ++r) batch.push_back({{1, "t", r, 1'000'000}, fake::make_hello(c, r, gpu)});
  int64_t t = 1'000'000;
  for (int64_t i = 0; i < 4; ++i, t += 400'000)
    for (int r = 0; r < c.world_size; ++r) {
      protocol::Step s = fake::make_step(c, r, i, t, 400'000, gpu);
      if (idle && r == 0)
        s.intervals.push_back({protocol::Lane::Compute, protocol::Phase::HostWait, t, t + 5'000, "", 0, 0.0});
      batch.push_back({{1, "t", r, s.end_us}, s});
    }
  return batch;
}

// The legend's entries as drawn, in order.
QStringList legend_texts(TimelinePlot& plot) {
  plot.resize(1000, 300);
  plot.replotIfDirty();
  QStringList texts;
  for (int i = 0; i < plot.legend->itemCount(); ++i)
    if (auto* item = dynamic_cast<PhaseLegendItem*>(plot.legend->item(i))) texts << item->text();
  return texts;
}

}  // namespace timeline_plot_test

using namespace timeline_plot_test;

TEST(TimelinePlotLegend, ACpuTrialIsDescribedInCpuWords) {
  TimelinePlot plot;
  plot.addEvents(trial("cpu-tiny-ddp", false));
  const QStringList texts = legend_texts(plot);
  ASSERT_FALSE(texts.isEmpty());
  for (const QString& t : texts) EXPECT_FALSE(t.contains(QStringLiteral("GPU"))) << t.toStdString();
  EXPECT_TRUE(texts.contains(phase_name(protocol::Phase::Forward)));
  EXPECT_TRUE(texts.contains(phase_name(protocol::Phase::AllReduce)));
}

TEST(TimelinePlotLegend, AnIdlePhaseIsNamedAfterTheTrialsDevice) {
  TimelinePlot cpu, gpu;
  cpu.addEvents(trial("cpu-tiny-ddp", false, true));
  gpu.addEvents(trial("7b-ddp", true, true));
  const QString cpuWords = QString::fromStdString(config::device_noun(false)) + QStringLiteral(" idle: host wait");
  EXPECT_TRUE(legend_texts(cpu).contains(cpuWords)) << legend_texts(cpu).join(", ").toStdString();
  EXPECT_TRUE(legend_texts(gpu).contains(QStringLiteral("GPU idle: host wait")))
      << legend_texts(gpu).join(", ").toStdString();
  EXPECT_FALSE(legend_texts(cpu).join(' ').contains(QStringLiteral("GPU")));
}

TEST(TimelinePlotLegend, ListsThePhasesDrawnAndNoOther) {
  // One rank has no collective; FSDP gathers and scatters but does not all-reduce.
  TimelinePlot single, fsdp;
  single.addEvents(trial("cpu-tiny", false));
  fsdp.addEvents(trial("7b-fsdp", true));
  const QStringList one = legend_texts(single), sharded = legend_texts(fsdp);
  EXPECT_FALSE(one.contains(phase_name(protocol::Phase::AllReduce))) << one.join(", ").toStdString();
  EXPECT_TRUE(one.contains(phase_name(protocol::Phase::Backward)));
  EXPECT_TRUE(sharded.contains(phase_name(protocol::Phase::AllGather))) << sharded.join(", ").toStdString();
  EXPECT_TRUE(sharded.contains(phase_name(protocol::Phase::ReduceScatter)));
  EXPECT_FALSE(sharded.contains(phase_name(protocol::Phase::AllReduce)));
  // Cleared, it lists nothing until bars come again.
  fsdp.clear();
  EXPECT_TRUE(legend_texts(fsdp).isEmpty());
}

namespace timeline_plot_test {

// A trial that failed before its first step (a worker that could not start) has a hello or
// nothing: its timeline keeps the plot's width, with no legend entries, instead of a strip a
// few pixels wide beside an empty legend row.
TEST(TimelinePlotLegend, ATimelineWithoutStepsKeepsItsWidth) {
  TimelinePlot empty;
  empty.resize(1000, 300);
  empty.setViewport(empty.rect());  // a hidden widget gets its resize event only when shown
  empty.replot();
  EXPECT_EQ(empty.legend->itemCount(), 0);
  EXPECT_GT(empty.axisRect()->width(), 800) << "an empty timeline";
  TimelinePlot hello;
  const config::TrialConfig c = *config::trial_preset("cpu-tiny-ddp");
  EventBatch batch;
  batch.push_back({{1, "t", 0, 1'000'000}, fake::make_hello(c, 0, false)});
  hello.addEvents(batch);
  hello.resize(1000, 300);
  hello.setViewport(hello.rect());
  hello.replot();
  EXPECT_GT(hello.axisRect()->width(), 800) << "a timeline with a hello and no step";
  // Once a step is drawn the legend row comes back under it, and the width stays.
  hello.addEvents(trial("cpu-tiny-ddp", false));
  hello.replot();
  EXPECT_GT(hello.legend->itemCount(), 0);
  EXPECT_NE(hello.legend->layout(), nullptr);
  EXPECT_GT(hello.axisRect()->width(), 800);
  hello.clear();
  hello.replot();
  EXPECT_GT(hello.axisRect()->width(), 800) << "cleared";
}

}  // namespace timeline_plot_test

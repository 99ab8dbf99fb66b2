// GPU-idle gaps of kernel-sampled steps in the plots: the timeline draws them on the compute lane
// with a legend entry and a hover that names the part and the CPU op, the telemetry plot shows
// the share of each sampled step the GPU ran kernels beside NVML's utilisation.
#include <gtest/gtest.h>

#include "core/analysis/trial_metrics.h"
#include "ui/plots/breakdown_plot.h"
#include "ui/plots/phase_legend_item.h"
#include "ui/plots/phase_style.h"
#include "ui/plots/telemetry_plot.h"
#include "ui/plots/timeline_data.h"
#include "ui/plots/timeline_overview.h"
#include "ui/plots/timeline_plot.h"

using namespace tunebench;
using namespace tunebench::ui;
using protocol::Lane;
using protocol::Phase;

namespace {

constexpr int64_t kT0 = 1'700'000'000'000'000;

// Three 10 ms steps of rank 0; the middle one kernel-sampled: 1.4 ms of kernels, the rest gaps.
EventBatch sampled_run() {
  EventBatch out;
  for (int64_t i = 0; i < 3; ++i) {
    protocol::Step s;
    s.step = i;
    s.start_us = kT0 + i * 10'000;
    s.end_us = s.start_us + 10'000;
    s.step_ms = 10.0;
    auto at = [&](Phase p, int64_t a, int64_t b, std::string label = {}) {
      s.intervals.push_back({protocol::default_lane(p), p, s.start_us + a, s.start_us + b, std::move(label), 0, 0.0});
    };
    if (i == 1) {
      s.gpu_sampled = true;
      s.gpu_busy_ms = 1.4;
      at(Phase::HostWait, 0, 1'000, "aten::batch_norm");
      at(Phase::Forward, 1'000, 1'500);
      at(Phase::LaunchGap, 1'500, 1'600);
      at(Phase::Forward, 1'600, 2'000);
      at(Phase::SyncWait, 2'000, 5'000, ".item() (aten::_local_scalar_dense)");
      at(Phase::Backward, 5'000, 5'500);
      at(Phase::HostWait, 5'500, 10'000, "");
    } else {
      at(Phase::Forward, 1'000, 4'000);
      at(Phase::Backward, 4'000, 9'500);
    }
    protocol::Event e;
    e.header.rank = 0;
    e.header.t_us = s.end_us;
    e.payload = std::move(s);
    out.push_back(std::move(e));
    protocol::GpuSample g;
    g.index = 0;
    g.util_pct = 100.0;  // NVML: a kernel ran in every sample period
    protocol::Event ge;
    ge.header.rank = 0;
    ge.header.t_us = kT0 + i * 10'000 + 5'000;
    ge.payload = g;
    out.push_back(std::move(ge));
  }
  return out;
}

const TimelineBar* bar_of(const TimelineData& data, Phase p) {
  for (const auto& b : data.row(TimelineRows::row(0, Lane::Compute)))
    if (b.phase == p) return &b;
  return nullptr;
}

}  // namespace

TEST(GpuIdlePlots, TimelineHoverNamesThePartAndTheOp) {
  TimelineData data;
  data.add(sampled_run());
  for (Phase p : {Phase::HostWait, Phase::LaunchGap, Phase::SyncWait}) {
    const TimelineBar* b = bar_of(data, p);
    ASSERT_NE(b, nullptr) << protocol::to_string(p);
    const auto hit = data.hit(TimelineRows::row(0, Lane::Compute), (b->start_s + b->end_s) / 2, 0.0);
    ASSERT_TRUE(hit);
    const QString tip = describe_hit(*hit);
    EXPECT_TRUE(tip.contains(phase_name(p))) << tip.toStdString();
    EXPECT_TRUE(tip.contains("the GPU ran nothing")) << tip.toStdString();
    const char* names = p == Phase::HostWait ? "aten::batch_norm" : p == Phase::SyncWait ? ".item()" : "CUDA graph";
    EXPECT_TRUE(tip.contains(QString::fromLatin1(names))) << tip.toStdString();
  }
  EXPECT_EQ(phase_name(Phase::HostWait), QStringLiteral("GPU idle: host wait"));
  EXPECT_EQ(phase_brush(Phase::HostWait).style(), Qt::BDiagPattern);
  EXPECT_EQ(phase_brush(Phase::Forward).style(), Qt::SolidPattern);
  // Pale: lighter than every phase of work.
  for (Phase idle : {Phase::HostWait, Phase::LaunchGap, Phase::SyncWait})
    for (Phase work : {Phase::Forward, Phase::Backward, Phase::Optimizer})
      EXPECT_GT(phase_color(idle).lightness(), phase_color(work).lightness());
}

TEST(GpuIdlePlots, TimelineDrawsTheGapsAndListsThemInTheLegend) {
  TimelinePlot plot;
  plot.resize(1000, 300);
  plot.addEvents(sampled_run());
  plot.setFollowLatest(false);
  plot.xAxis->setRange(0, plot.data().latest_s());
  plot.replot();
  EXPECT_GT(plot.lastDrawnRects(), 8);
  // The legend holds an item per phase drawn, the GPU-idle parts among them, in GPU words.
  const auto& phases = legend_phases();
  for (Phase p : {Phase::HostWait, Phase::LaunchGap, Phase::SyncWait}) {
    EXPECT_NE(std::find(phases.begin(), phases.end(), p), phases.end());
    bool listed = false;
    for (int i = 0; i < plot.legend->itemCount(); ++i)
      if (auto* item = dynamic_cast<PhaseLegendItem*>(plot.legend->item(i)))
        listed = listed || (item->phase() == p && item->text() == phase_name(p));
    EXPECT_TRUE(listed) << phase_name(p).toStdString();
  }
  const TimelineBar* sync = bar_of(plot.data(), Phase::SyncWait);
  ASSERT_NE(sync, nullptr);
  const QPointF pos(plot.xAxis->coordToPixel((sync->start_s + sync->end_s) / 2),
                    plot.yAxis->coordToPixel(TimelineRows::row(0, Lane::Compute)));
  EXPECT_TRUE(plot.tooltipAt(pos).contains("GPU idle: sync")) << plot.tooltipAt(pos).toStdString();
}

// A sampled 7B forward is thousands of kernels with launch gaps of microseconds between them: at a
// step's zoom a pixel holds several of each. The pixel takes the phase that covers most of it
// (bar_pixels.h); it used to take the first bar starting in it, and four pixels in ten showed the
// gaps' colour, in the timeline and in its overview strip.
namespace {

// One 20 ms kernel-sampled step: 9 µs kernels and 1 µs launch gaps, the GPU busy 90 %.
EventBatch busy_forward_with_tiny_gaps() {
  protocol::Step s;
  s.step = 0;
  s.start_us = kT0;
  s.end_us = kT0 + 20'000;
  s.step_ms = 20.0;
  s.gpu_sampled = true;
  s.gpu_busy_ms = 18.0;
  for (int64_t t = 0; t < 20'000; t += 10) {
    s.intervals.push_back({Lane::Compute, Phase::Forward, kT0 + t, kT0 + t + 9, {}, 0, 0.0});
    s.intervals.push_back({Lane::Compute, Phase::LaunchGap, kT0 + t + 9, kT0 + t + 10, {}, 0, 0.0});
  }
  protocol::Event e;
  e.header.rank = 0;
  e.header.t_us = s.end_us;
  e.payload = std::move(s);
  EventBatch batch;
  batch.push_back(std::move(e));
  return batch;
}

// Pixels of row y in [x0, x1) of the colour of `a` and of `b` (within a small tolerance).
std::pair<int, int> count_colours(const QImage& image, int y, int x0, int x1, Phase a, Phase b) {
  auto near = [](QColor c, QColor d) {
    return std::abs(c.red() - d.red()) + std::abs(c.green() - d.green()) + std::abs(c.blue() - d.blue()) <= 6;
  };
  int na = 0, nb = 0;
  for (int x = x0; x < x1; ++x) {
    const QColor c = image.pixelColor(x, y);
    na += near(c, phase_color(a));
    nb += near(c, phase_color(b));
  }
  return {na, nb};
}

}  // namespace

TEST(GpuIdlePlots, SubPixelLaunchGapsDoNotPaintAKernelBusyForwardAsIdle) {
  TimelinePlot plot;
  plot.resize(1000, 300);
  plot.addEvents(busy_forward_with_tiny_gaps());
  plot.setFollowLatest(false);
  const auto& bars = plot.data().row(TimelineRows::row(0, Lane::Compute));
  ASSERT_EQ(bars.size(), 4000u);
  plot.xAxis->setRange(bars.front().start_s, bars.back().end_s);  // ~20 µs a pixel
  plot.replot();
  const QImage image = plot.toPixmap(1000, 300, 1.0).toImage();
  const int y = int(plot.yAxis->coordToPixel(TimelineRows::row(0, Lane::Compute)));
  const int x0 = int(plot.xAxis->coordToPixel(bars.front().start_s)) + 2;
  const int x1 = int(plot.xAxis->coordToPixel(bars.back().end_s)) - 2;
  ASSERT_GT(x1 - x0, 500);
  const auto [as_forward, as_gap] = count_colours(image, y, x0, x1, Phase::Forward, Phase::LaunchGap);
  EXPECT_GE(as_forward, (x1 - x0) * 95 / 100) << as_forward << " forward, " << as_gap << " gap pixels of " << x1 - x0;
  EXPECT_EQ(as_gap, 0);

  // The overview strip under the timeline paints the same way (the whole run across its width).
  TimelineOverview overview(&plot.data(), &plot.layout());
  overview.resize(600, 24);
  overview.setView(bars.front().start_s - 1.0, bars.back().end_s + 1.0);  // nothing dimmed over the step
  const QImage strip = overview.grab().toImage();
  int left = strip.width(), right = 0;  // the step's columns: everything not background
  const QColor base = overview.palette().color(QPalette::Base);
  const int row = strip.height() / 4;   // the compute band (compute, then comm)
  for (int x = 0; x < strip.width(); ++x)
    if (strip.pixelColor(x, row) != base) left = std::min(left, x), right = std::max(right, x);
  ASSERT_GT(right - left, 100) << "the step spans the strip";
  const auto [strip_forward, strip_gap] = count_colours(strip, row, left + 1, right, Phase::Forward, Phase::LaunchGap);
  EXPECT_GE(strip_forward, (right - left - 1) * 95 / 100) << strip_forward << " forward, " << strip_gap << " gap";
  EXPECT_EQ(strip_gap, 0);
}

TEST(GpuIdlePlots, TelemetryShowsGpuBusyOfSampledStepsBesideNvml) {
  TelemetryPlot plot;
  plot.resize(600, 400);
  plot.addEvents(sampled_run());
  plot.replotIfDirty();
  EXPECT_EQ(plot.samples("GPU 0", 0), 3);  // NVML: 100 %
  EXPECT_EQ(plot.busyPoints(0), 1);        // one sampled step
  ASSERT_TRUE(plot.lastBusyPct(0));
  EXPECT_NEAR(*plot.lastBusyPct(0), 14.0, 1e-9);
  plot.clear();
  EXPECT_EQ(plot.busyPoints(0), 0);
  // Kernel samples without NVML (an imported trace): still a GPU plot, not "CPU %".
  EventBatch steps;
  for (const auto& e : sampled_run())
    if (e.is<protocol::Step>()) steps.push_back(e);
  plot.addEvents(steps);
  EXPECT_FALSE(plot.cpuMode());
  EXPECT_EQ(plot.busyPoints(0), 1);
}

TEST(GpuIdlePlots, BreakdownShowsTheIdleParts) {
  BreakdownPlot plot;
  plot.resize(600, 400);
  analysis::MeanBreakdown b;
  b.step_ms = 10;
  b.part_ms[size_t(analysis::Part::Forward)] = 0.9;
  b.part_ms[size_t(analysis::Part::Backward)] = 0.5;
  b.part_ms[size_t(analysis::Part::HostWait)] = 5.5;
  b.part_ms[size_t(analysis::Part::LaunchGap)] = 0.1;
  b.part_ms[size_t(analysis::Part::SyncWait)] = 3.0;
  plot.setTrials({QStringLiteral("tiny")}, {b});
  ASSERT_NE(plot.bars(analysis::Part::HostWait), nullptr);
  EXPECT_EQ(plot.bars(analysis::Part::HostWait)->name(), QStringLiteral("GPU idle: host wait"));
  EXPECT_NEAR(plot.stackedSum(0), 10.0, 1e-9);
}

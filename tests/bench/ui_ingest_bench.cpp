// ui_ingest_bench: how fast the live pipeline takes an 8-rank run, and whether the window stalls.
//
// 8 writer threads (one per rank, like 8 worker processes) stream 2000 DDP steps each, plus one
// telemetry sample per step, as fast as they can into the runner's EventChannel over a unix
// socket. The GUI thread parses, batches and feeds the LiveView (timeline, step time, telemetry)
// exactly as the window does, while a 10 ms heartbeat timer measures the longest the event loop
// was blocked. Then it times full replots of each plot. Run it offscreen:
//   QT_QPA_PLATFORM=offscreen build/tests/bench/ui_ingest_bench [ranks] [steps]
// It measures; it asserts nothing (numbers go to docs/UI.md with date, machine and command).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>

#include <QApplication>
#include <QElapsedTimer>
#include <QTemporaryDir>
#include <QTimer>

#include "core/protocol/event_writer.h"
#include "tests/ui/fake_events.h"
#include "ui/plots/step_time_plot.h"
#include "ui/plots/telemetry_plot.h"
#include "ui/plots/timeline_plot.h"
#include "ui/runner/event_channel.h"
#include "ui/windows/live_view.h"

using namespace tunebench;
using Clock = std::chrono::steady_clock;

namespace {

std::vector<std::string> make_stream(const config::TrialConfig& c, int rank, int steps) {
  std::vector<std::string> lines;
  const int64_t t0 = 1796083200000000, step_us = 375000;
  auto header = [&](int64_t t) { return protocol::Header{protocol::kSchemaVersion, "bench", rank, t}; };
  lines.push_back(protocol::format_line({header(t0), fake::make_hello(c, rank, true)}));
  for (int s = 0; s < steps; ++s) {
    const int64_t t = t0 + 1000000 + s * step_us;
    lines.push_back(protocol::format_line({header(t + step_us), fake::make_step(c, rank, s, t, step_us, true)}));
    lines.push_back(protocol::format_line({header(t + step_us / 2), fake::make_sample(rank, s, true)}));
  }
  return lines;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

template <class F> double time_ms(F&& f) {
  const auto a = Clock::now();
  f();
  return std::chrono::duration<double, std::milli>(Clock::now() - a).count();
}

}  // namespace

int main(int argc, char** argv) {
  QApplication app(argc, argv);
  const int ranks = argc > 1 ? std::atoi(argv[1]) : 8;
  const int steps = argc > 2 ? std::atoi(argv[2]) : 2000;
  config::TrialConfig c = *config::trial_preset("7b-ddp");
  c.world_size = ranks;
  c.steps = steps;

  std::vector<std::vector<std::string>> streams;
  size_t bytes = 0, events = 0, intervals = 0;
  for (int r = 0; r < ranks; ++r) {
    streams.push_back(make_stream(c, r, steps));
    for (const auto& l : streams.back()) bytes += l.size();
    events += streams.back().size();
  }
  intervals = size_t(ranks) * size_t(steps) * fake::make_step(c, 0, 5, 0, 375000, true).intervals.size();

  ui::LiveView view;
  view.resize(1400, 800);
  view.show();
  QTemporaryDir dir;
  ui::EventChannel channel;
  if (!channel.listen(dir.filePath("events.sock"))) {
    std::fprintf(stderr, "listen: %s\n", qPrintable(channel.errorString()));
    return 1;
  }
  size_t received = 0, batches = 0;
  QObject::connect(&channel, &ui::EventChannel::eventsArrived, [&](const ui::EventBatch& b) {
    view.addEvents(b);
    received += b.size();
    ++batches;
  });

  // The heartbeat: how late does a 10 ms timer fire while all this goes on?
  QElapsedTimer beat;
  double maxGapMs = 0.0;
  QTimer heartbeat;
  heartbeat.setInterval(10);
  QObject::connect(&heartbeat, &QTimer::timeout, [&] {
    if (beat.isValid()) maxGapMs = std::max(maxGapMs, beat.nsecsElapsed() / 1e6);
    beat.restart();
  });
  heartbeat.start();

  const std::string spec = channel.spec().toStdString();
  const auto start = Clock::now();
  std::vector<std::thread> writers;
  // Pre-formatted lines go through one sink per rank (one connection per rank, as the contract says).
  for (int r = 0; r < ranks; ++r)
    writers.emplace_back([&, r] {
      auto sink = protocol::open_line_sink(spec);
      for (const auto& line : streams[size_t(r)]) sink->write_line(line);
    });
  while (received < events) QCoreApplication::processEvents(QEventLoop::AllEvents, 50);
  const double ingestS = std::chrono::duration<double>(Clock::now() - start).count();
  for (auto& t : writers) t.join();
  heartbeat.stop();

  // Replot cost with everything loaded: zoomed out over the whole run, and following the latest steps.
  view.replotNow();
  ui::TimelinePlot* tl = view.timeline();
  std::vector<double> full, follow, step, tele;
  tl->setFollowLatest(false);
  tl->xAxis->setRange(0, tl->data().latest_s());
  for (int i = 0; i < 10; ++i) full.push_back(time_ms([&] { tl->replot(QCustomPlot::rpImmediateRefresh); }));
  const int drawnFull = tl->lastDrawnRects();
  tl->setFollowLatest(true);
  tl->replotIfDirty();
  for (int i = 0; i < 10; ++i) follow.push_back(time_ms([&] { tl->replot(QCustomPlot::rpImmediateRefresh); }));
  for (int i = 0; i < 10; ++i) step.push_back(time_ms([&] { view.stepTime()->replot(QCustomPlot::rpImmediateRefresh); }));
  for (int i = 0; i < 10; ++i) tele.push_back(time_ms([&] { view.telemetry()->replot(QCustomPlot::rpImmediateRefresh); }));

  std::printf("ui_ingest_bench: %d ranks x %d steps: %zu events (%zu intervals), %.1f MB of JSON lines\n", ranks, steps,
              events, intervals, double(bytes) / 1e6);
  std::printf("  ingest (socket -> EventReader -> batches -> LiveView): %.2f s, %.0f events/s, %.0f intervals/s, %zu batches\n",
              ingestS, double(events) / ingestS, double(intervals) / ingestS, batches);
  std::printf("  longest GUI event-loop stall during ingest: %.1f ms\n", maxGapMs);
  std::printf("  replots while ingesting: timeline %d, step time %d, telemetry %d\n", tl->replotCount(),
              view.stepTime()->replotCount(), view.telemetry()->replotCount());
  std::printf("  timeline replot, whole run in view (%zu bars, %d rects drawn): median %.1f ms\n", tl->barCount(), drawnFull, median(full));
  std::printf("  timeline replot, following the latest steps: median %.1f ms\n", median(follow));
  std::printf("  step-time replot: median %.1f ms; telemetry replot: median %.1f ms\n", median(step), median(tele));
  return 0;
}

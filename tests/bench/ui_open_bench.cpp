// ui_open_bench: the longest freeze of the window while it opens a ~100 MB session and shows a
// trial of it (issue 16: store work off the GUI thread).
//
// It makes (once, then reuses) a session of 5 trials x 8 ranks x 2000 DDP-shaped steps with one
// telemetry sample per step, written by store::TrialWriter as a live run would. Then:
//   1. the work the window used to do on the GUI thread, timed on this thread: SessionStore::open
//      (file checks, PRAGMA quick_check), the trial list with its summaries, and loading one trial;
//   2. the real MainWindow opening the file through SessionActions (a background job) and showing
//      its most recent trial (another job), while a 5 ms heartbeat timer records the longest gap
//      of the GUI event loop: that gap is the longest freeze a user sees;
//   3. the same for selecting another trial of the open session.
// Run it offscreen:
//   QT_QPA_PLATFORM=offscreen build/tests/bench/ui_open_bench [session path] [trials] [steps]
// It measures; it asserts nothing (the numbers go to docs/BENCHMARKS.md with date and machine).
#include <algorithm>
#include <chrono>
#include <cstdio>

#include <QApplication>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QStandardPaths>
#include <QTableView>
#include <QTimer>

#include "core/store/session_store.h"
#include "core/store/trial_writer.h"
#include "tests/ui/fake_events.h"
#include "ui/models/trials_model.h"
#include "ui/plots/step_time_plot.h"
#include "ui/plots/timeline_plot.h"
#include "ui/runner/background_jobs.h"
#include "ui/windows/live_view.h"
#include "ui/windows/main_window.h"
#include "ui/windows/session_actions.h"
#include "ui/windows/trial_viewer.h"

using namespace tunebench;
using Clock = std::chrono::steady_clock;

namespace {

void make_session(const std::string& path, int trials, int ranks, int steps) {
  auto s = store::SessionStore::create(path, "open benchmark");
  config::TrialConfig c = *config::trial_preset("7b-ddp");
  c.world_size = ranks;
  c.steps = steps;
  c.warmup = 2;
  for (int t = 0; t < trials; ++t) {
    c.name = "7b ddp x8 #" + std::to_string(t);
    const int64_t id = s.add_trial(c.name, config::to_json(c));
    store::TrialWriter::Options options;
    options.background_flush = false;
    options.max_batch_events = 8192;
    store::TrialWriter writer(path, id, options);
    const std::string run = "bench-" + std::to_string(t);
    const int64_t t0 = 1796083200000000 + t * int64_t(3600) * 1000000, step_us = 375000;
    for (int r = 0; r < ranks; ++r) writer.add({{protocol::kSchemaVersion, run, r, t0}, fake::make_hello(c, r, true)});
    for (int i = 0; i < steps; ++i)
      for (int r = 0; r < ranks; ++r) {
        const int64_t at = t0 + 1000000 + i * step_us;
        writer.add({{protocol::kSchemaVersion, run, r, at + step_us}, fake::make_step(c, r, i, at, step_us, true)});
        writer.add({{protocol::kSchemaVersion, run, r, at + step_us / 2}, fake::make_sample(r, i, true)});
      }
    protocol::Done done;
    for (int r = 0; r < ranks; ++r) writer.add({{protocol::kSchemaVersion, run, r, t0 + (steps + 3) * step_us}, done});
    writer.finish(protocol::TrialStatus::Done);
    std::printf("  trial %d written\n", t);
  }
}

double ms_since(Clock::time_point a) { return std::chrono::duration<double, std::milli>(Clock::now() - a).count(); }

// Runs the event loop until `done` while a 5 ms timer measures the longest gap between its ticks.
struct StallMeter {
  double longest_ms = 0;
  double elapsed_ms = 0;
  template <class Done>
  void run(Done done, int timeoutMs) {
    QTimer heartbeat;
    heartbeat.setInterval(5);
    auto last = Clock::now();
    QObject::connect(&heartbeat, &QTimer::timeout, [&] {
      longest_ms = std::max(longest_ms, ms_since(last));
      last = Clock::now();
    });
    heartbeat.start();
    const auto start = Clock::now();
    QElapsedTimer clock;
    clock.start();
    while (!done() && clock.elapsed() < timeoutMs) QApplication::processEvents(QEventLoop::AllEvents, 5);
    longest_ms = std::max(longest_ms, ms_since(last));
    elapsed_ms = ms_since(start);
  }
};

}  // namespace

int main(int argc, char** argv) {
  QApplication app(argc, argv);
  QStandardPaths::setTestModeEnabled(true);
  const std::string path = argc > 1 ? argv[1] : "/tmp/tunebench-open-bench.tbsession";
  const int trials = argc > 2 ? std::atoi(argv[2]) : 5;
  const int steps = argc > 3 ? std::atoi(argv[3]) : 2000;
  const int ranks = 8;
  if (!QFileInfo::exists(QString::fromStdString(path))) {
    std::printf("making %s: %d trials x %d ranks x %d steps\n", path.c_str(), trials, ranks, steps);
    make_session(path, trials, ranks, steps);
  }
  std::printf("session: %s, %.1f MB\n", path.c_str(), QFileInfo(QString::fromStdString(path)).size() / 1e6);

  // 1. What the window did on the GUI thread before (every millisecond of it a freeze).
  auto a = Clock::now();
  auto opened = store::SessionStore::open(path, {store::SessionStore::Mode::ReadOnly});
  const double open_ms = ms_since(a);
  a = Clock::now();
  const auto list = opened.list_trials();
  for (const auto& t : list) opened.trial_summaries(t.id);
  const double list_ms = ms_since(a);
  a = Clock::now();
  const auto loaded = opened.load_trial(list.back().id);
  const double load_ms = ms_since(a);
  std::printf("on the GUI thread before: open + quick_check %.0f ms, trial list %.0f ms, one trial loaded %.0f ms\n",
              open_ms, list_ms, load_ms);

  // 2. The window now: open (background), then its most recent trial drawn (background + hand-over).
  tunebench::ui::MainWindow::Options o;
  o.useSettings = false;
  o.detectDevices = false;
  tunebench::ui::MainWindow window(o);
  window.resize(1600, 1000);
  window.show();
  QApplication::processEvents();
  auto* steps0 = window.liveView()->stepTime();
  StallMeter openMeter;
  a = Clock::now();
  double rows_ms = -1;
  window.sessionActions()->openSession(QString::fromStdString(path));
  openMeter.run(
      [&] {
        if (rows_ms < 0 && window.trialsModel()->rowCount() == int(list.size())) rows_ms = ms_since(a);
        return rows_ms >= 0 && !window.viewer()->isLoading() && steps0->stepPoints(0) == steps &&
               !window.jobs()->isBusy();
      },
      120000);
  window.liveView()->replotNow();
  std::printf("window: trial list shown after %.0f ms, last trial drawn after %.0f ms; longest GUI freeze %.0f ms\n",
              rows_ms, openMeter.elapsed_ms, openMeter.longest_ms);

  // 3. Another trial of the open session.
  StallMeter selectMeter;
  window.trialsView()->selectRow(0);
  selectMeter.run(
      [&] { return !window.viewer()->isLoading() && !window.jobs()->isBusy() && steps0->stepPoints(7) == steps; },
      120000);
  window.liveView()->replotNow();
  std::printf("select another trial: drawn after %.0f ms; longest GUI freeze %.0f ms (%zu bars on the timeline)\n",
              selectMeter.elapsed_ms, selectMeter.longest_ms, window.liveView()->timeline()->barCount());
  return 0;
}

// Screenshots of GPU-idle time for docs/UI.md: a recorded event log of kernel-sampled steps (or the
// torch.profiler traces of one run) stored in a scratch session and shown in the window. Run under Xvfb:
//   tunebench-idle-screenshot OUT_PREFIX light|dark FILE...
// FILE: one worker event log (.jsonl) or the trace files of one run. Writes OUT_PREFIX-timeline.png
// (the window with the first kernel-sampled step filling the timeline: kernels, and the pale hatched
// host-wait, launch-gap and sync gaps with their legend; the telemetry plot with GPU busy of the
// sampled steps beside NVML when the log has GPU samples), OUT_PREFIX-compare.png (the trial's
// figures and breakdown with its GPU-idle parts) and OUT_PREFIX-diagnosis.png (host-bound, the fixes
// in order).
#include <cstdio>

#include <QApplication>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>

#include "core/import/trace_import.h"
#include "core/store/event_log_import.h"
#include "core/store/session_store.h"
#include "ui/plots/timeline_plot.h"
#include "ui/runner/background_jobs.h"
#include "ui/windows/analysis_controller.h"
#include "ui/windows/comparison_window.h"
#include "ui/windows/live_view.h"
#include "ui/windows/main_window.h"
#include "ui/windows/session_actions.h"
#include "ui/windows/theme.h"
#include "ui/windows/trial_viewer.h"
#include "tests/ui/windows/screenshot_support.h"

using namespace tunebench;
using namespace tunebench::ui;


int main(int argc, char** argv) {
  QApplication app(argc, argv);
  if (!start_screenshots(argc, argv, 4, "OUT_PREFIX light|dark FILE...")) return 2;
  const QString prefix = QString::fromLocal8Bit(argv[1]);
  std::vector<std::string> files(argv + 3, argv + argc);

  QTemporaryDir dir;
  const std::string session = dir.filePath(QStringLiteral("idle.tbsession")).toStdString();
  int64_t step = -1;
  try {
    auto s = store::SessionStore::create(session, "GPU idle");
    const bool log = files.size() == 1 && files[0].size() > 6 && files[0].substr(files[0].size() - 6) == ".jsonl";
    const int64_t id = log ? store::import_event_log(s, files[0]).trial_id : import::import_torch_traces(s, files).trial_id;
    for (const auto& st : s.load_trial(id).log.ranks.begin()->second.steps)
      if (st.gpu_sampled && !st.warmup) {
        step = st.step;
        break;
      }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }

  MainWindow w(screenshot_window_options());
  show_for_screenshots(w);
  w.sessionActions()->openSession(QString::fromStdString(session));
  settle(w);
  w.selectRows({QStringLiteral("0")});
  settle(w);

  TimelinePlot* timeline = w.liveView()->timeline();
  timeline->setFollowLatest(false);
  const auto& marks = timeline->data().stepMarks();
  for (size_t i = 0; i < marks.size(); ++i)
    if (marks[i].step == step) {
      const double end = i + 1 < marks.size() ? marks[i + 1].t_s : timeline->data().latest_s();
      timeline->zoomToRange(marks[i].t_s - 0.02 * (end - marks[i].t_s), end);
    }
  bool ok = save_screenshot(w, prefix + QStringLiteral("-timeline.png"));

  w.analysis()->compareRows({0});
  if (!QTest::qWaitFor([&] { return w.analysis()->lastComparison() != nullptr; }, 60000))
    std::fprintf(stderr, "no comparison window after 60 s\n");
  if (ComparisonWindow* c = w.analysis()->lastComparison()) {
    c->resize(1600, 1000);
    ok = save_screenshot(*c, prefix + QStringLiteral("-compare.png")) && ok;
    c->tabs()->setCurrentIndex(1);
    ok = save_screenshot(*c, prefix + QStringLiteral("-diagnosis.png")) && ok;
  } else {
    ok = false;
  }
  return ok ? 0 : 1;
}

// Issue 44: the trial view at a laptop's 1280 x 760. The timeline's lanes collapsed into one strip
// labelled "r0" and the legends overlapped each other and the data. Here every rank keeps a lane
// with its label (2, 4 and 8 ranks, CPU and GPU trials), and no legend covers another legend or
// any plot's data. The same at 1600 x 1000. Memory through a sampled step (issue 41) shares the
// plots' row: its legend covers nothing either, and step time keeps the room its legend needs.
#include <gtest/gtest.h>

#include <QFontMetrics>
#include <QProcess>
#include <QTemporaryDir>

#include "tests/ui/windows/window_test_util.h"
#include "ui/models/trials_model.h"
#include "ui/plots/memory_timeline_plot.h"
#include "ui/plots/step_time_plot.h"
#include "ui/plots/telemetry_plot.h"
#include "ui/plots/timeline_plot.h"
#include "ui/windows/live_view.h"
#include "ui/windows/session_actions.h"
#include "ui/windows/trial_viewer.h"

using namespace tunebench;
using namespace tunebench::ui;
using namespace tunebench::ui::test;

namespace live_view_layout {

// A recorded run of `ranks` ranks written by the fake worker (tests/ui/fake_worker.cpp).
QString synthesize(const QTemporaryDir& dir, const char* preset, int ranks) {
  const QString out = dir.filePath(QStringLiteral("%1-x%2.jsonl").arg(QLatin1String(preset)).arg(ranks));
  QProcess p;
  p.start(QStringLiteral(TUNEBENCH_FAKE_WORKER),
          {QStringLiteral("--synthesize"), out, QStringLiteral("--preset"), QLatin1String(preset),
           QStringLiteral("--ranks"), QString::number(ranks), QStringLiteral("--steps"), QStringLiteral("12")});
  EXPECT_TRUE(p.waitForFinished(kTimeoutMs));
  EXPECT_EQ(p.exitCode(), 0) << p.readAllStandardError().toStdString();
  return out;
}

// Imports the log and shows it, as File > Import does.
void show_log(MainWindow& w, const QString& log) {
  const int rows = w.trialsModel()->rowCount();
  ASSERT_TRUE(w.sessionActions()->importLog(log));
  wait_jobs(w);
  ASSERT_EQ(w.trialsModel()->rowCount(), rows + 1);
  w.selectRows({QString::number(rows)});
  TB_WAIT_FOR(w.viewer()->shown() == w.trialsModel()->record(rows).id, kTimeoutMs);
  wait_jobs(w);
}

// Lets the window lay out what the plots asked for (a plot's least height follows its first
// layout), then replots as a screenshot would.
void settle(MainWindow& w) {
  for (int round = 0; round < 3; ++round) {
    QCoreApplication::processEvents();
    for (LivePlot* p : {static_cast<LivePlot*>(w.liveView()->timeline()),
                        static_cast<LivePlot*>(w.liveView()->stepTime()),
                        static_cast<LivePlot*>(w.liveView()->telemetry()),
                        static_cast<LivePlot*>(w.liveView()->memoryTimeline())}) {
      p->markDirty();
      p->replotIfDirty();
      p->replot();
      p->replot();  // labels and legend columns settle after the margins did
    }
  }
}

// Every rank of the timeline has a row at least a line of text high and its label ("r3" or
// "rank 3 compute"); labels do not run into each other. Failures name what is missing.
void expect_every_rank_labelled(TimelinePlot* t, int ranks, const std::string& where) {
  const QFontMetrics fm(t->yAxis->tickLabelFont());
  const int line = fm.height();
  const double slotPx = double(t->axisRect()->height()) / std::max(1, t->layout().count());
  const QVector<double> ticks = t->yAxis->tickVector();
  const QVector<QString> labels = t->yAxis->tickVectorLabels();
  std::vector<double> labelled;  // label centres in pixels
  for (int r = 0; r < ranks; ++r) {
    int rows = 0;
    for (int i = 0; i < t->layout().count(); ++i) rows += t->layout().slot(i).rank == r;
    EXPECT_GE(rows * slotPx, line) << where << ": rank " << r << " gets " << rows * slotPx << " px of "
                                    << t->axisRect()->height() << " (a line of text is " << line << ")";
    bool found = false;
    for (int i = 0; i < ticks.size() && i < labels.size(); ++i) {
      const QString& l = labels[i];
      if (l == QStringLiteral("r%1").arg(r) || l.startsWith(QStringLiteral("rank %1 ").arg(r))) {
        found = true;
        labelled.push_back(t->yAxis->coordToPixel(ticks[i]));
      }
    }
    EXPECT_TRUE(found) << where << ": no label for rank " << r;
  }
  std::sort(labelled.begin(), labelled.end());
  for (size_t i = 1; i < labelled.size(); ++i)
    EXPECT_GE(labelled[i] - labelled[i - 1], line - 1) << where << ": two rank labels " << labelled[i] - labelled[i - 1]
                                                       << " px apart";
  // The labels sit inside the plotting area's height, not above or below it.
  for (double y : labelled) {
    EXPECT_GE(y, t->axisRect()->top()) << where;
    EXPECT_LE(y, t->axisRect()->bottom()) << where;
  }
}

// No visible legend of the view's plots overlaps another one or any plot's data area, and each
// lies inside its plot. Rectangles in the live view's coordinates.
void expect_legends_clear(LiveView* view, const std::string& where) {
  struct Box {
    QRect rect;
    std::string what;
  };
  std::vector<Box> legends, data;
  for (LivePlot* p : {static_cast<LivePlot*>(view->timeline()), static_cast<LivePlot*>(view->stepTime()),
                      static_cast<LivePlot*>(view->telemetry()), static_cast<LivePlot*>(view->memoryTimeline())}) {
    if (!p->isVisible()) continue;
    const QPoint at = p->mapTo(view, QPoint(0, 0));
    const std::string name = p->objectName().toStdString();
    for (QCPLegend* legend : p->findChildren<QCPLegend*>()) {
      if (!legend->visible() || legend->itemCount() == 0) continue;
      const QRect r = legend->outerRect();
      EXPECT_TRUE(p->rect().contains(r)) << where << ": a legend of " << name << " runs out of its plot";
      legends.push_back({r.translated(at), name + " legend"});
    }
    for (QCPAxisRect* rect : p->axisRects())
      if (rect->visible() && rect->height() > 0) data.push_back({rect->rect().translated(at), name + " data"});
  }
  for (size_t i = 0; i < legends.size(); ++i) {
    for (size_t j = i + 1; j < legends.size(); ++j)
      EXPECT_FALSE(legends[i].rect.intersects(legends[j].rect))
          << where << ": " << legends[i].what << " overlaps " << legends[j].what;
    for (const Box& d : data)
      EXPECT_FALSE(legends[i].rect.intersects(d.rect)) << where << ": " << legends[i].what << " covers " << d.what;
  }
}

struct Case {
  const char* preset;
  int ranks;
};

}  // namespace live_view_layout

using namespace live_view_layout;

TEST(LiveViewLayout, EveryRankKeepsALabelledLaneAndNoLegendCoversAnotherOrTheData) {
  QTemporaryDir dir;
  auto w = make_window();
  for (const QSize size : {QSize(1280, 760), QSize(1600, 1000)}) {
    w->resize(size);
    for (const Case c : {Case{"cpu-tiny-ddp", 2}, Case{"7b-ddp", 2}, Case{"7b-ddp", 4}, Case{"7b-fsdp", 8}}) {
      show_log(*w, synthesize(dir, c.preset, c.ranks));
      settle(*w);
      const std::string where = std::to_string(size.width()) + "x" + std::to_string(size.height()) + ", " +
                                c.preset + " x" + std::to_string(c.ranks);
      TimelinePlot* t = w->liveView()->timeline();
      ASSERT_EQ(t->data().ranks(), c.ranks) << where;
      EXPECT_EQ(w->size(), size) << where << ": the window grew to make room";
      expect_every_rank_labelled(t, c.ranks, where);
      expect_legends_clear(w->liveView(), where);
      // A GPU trial's sampled steps carry a memory timeline (the fake worker's): it is drawn, and the
      // step-time legend keeps its entries whole beside it.
      MemoryTimelinePlot* memory = w->liveView()->memoryTimeline();
      const bool gpu = std::string(c.preset).rfind("cpu", 0) != 0;
      EXPECT_EQ(memory->hasStep(), gpu) << where << ": " << memory->note().toStdString();
      if (gpu) {
        EXPECT_EQ(memory->peakMarks(), 3) << where;
      }
      QCPLegend* steps = w->liveView()->stepTime()->legend;
      for (int i = 0; i < steps->itemCount(); ++i)
        if (auto* item = qobject_cast<QCPPlottableLegendItem*>(steps->item(i))) {
          const int text = QFontMetrics(item->font()).horizontalAdvance(item->plottable()->name());
          EXPECT_GE(item->outerRect().width(), text + steps->iconSize().width()) << where << ": step-time legend entry "
                                                                                  << item->plottable()->name().toStdString()
                                                                                  << " is cut";
        }
    }
  }
}

TEST(LiveViewLayout, TheShippedCpuExampleAt1280x760) {
  // The example a new user opens first: its 2-rank DDP trial at a laptop's size.
  QTemporaryDir dir;
  auto w = make_window();
  w->resize(1280, 760);
  const QString session = copy_of(dir, QStringLiteral(TUNEBENCH_SESSIONS_DIR "/cpu-tiny.tbsession"));
  w->sessionActions()->openSession(session);
  wait_jobs(*w);
  int ddp = -1;
  for (int r = 0; r < w->trialsModel()->rowCount(); ++r)
    if (w->trialsModel()->record(r).config.world_size == 2) ddp = r;
  ASSERT_GE(ddp, 0);
  w->selectRows({QString::number(ddp)});
  TB_WAIT_FOR(w->viewer()->shown() == w->trialsModel()->record(ddp).id, kTimeoutMs);
  wait_jobs(*w);
  settle(*w);
  expect_every_rank_labelled(w->liveView()->timeline(), 2, "cpu-tiny example");
  expect_legends_clear(w->liveView(), "cpu-tiny example");
}

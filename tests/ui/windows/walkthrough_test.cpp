// The window used as a person uses it, on a CPU-only machine: every step goes through the real
// menu bar, found by the entries' visible text (QActions of the QMenuBar's menus), and through
// the dialogs those entries open, found as top-level widgets and answered as a user would (a file
// chosen in the file dialog, a value typed, a button clicked). No controller is called directly;
// the window is read only to check what it shows. Trials run on the fake worker.
//
// The walk: a new session, a CPU trial and a 2-rank one, compared; an example opened and Open
// recent back to the user's own session; What if… for 2x RTX 4090 (and the Prediction dock asked
// the same); Investigate… with a budget of 2; Find the fastest… with 1 minute; a torch.profiler
// trace imported; every export format written. And every menu path docs/UI.md names
// (**Menu > Item**) must exist in the real menu bar. Screenshots of each step are kept in
// TUNEBENCH_WALKTHROUGH_DIR (the test's output folder in the build tree).
#include <gtest/gtest.h>

#include "tests/ui/wait_for.h"

#include <functional>

#include <QAbstractButton>
#include <QApplication>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QItemSelectionModel>
#include <QLabel>
#include <QListWidget>
#include <QMenu>
#include <QMenuBar>
#include <QPushButton>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTableView>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>

#include "tests/ui/windows/window_test_util.h"
#include "ui/models/trials_model.h"
#include "ui/runner/background_jobs.h"
#include "ui/windows/autotune_dialog.h"
#include "ui/windows/comparison_window.h"
#include "ui/windows/diagnosis_view.h"
#include "ui/windows/investigate_window.h"
#include "ui/windows/knob_field.h"
#include "ui/windows/live_view.h"
#include "ui/windows/prediction_panel.h"
#include "ui/windows/session_controller.h"
#include "ui/windows/start_page.h"
#include "ui/windows/trial_form.h"
#include "ui/windows/what_if_dialog.h"

using namespace tunebench;
using namespace tunebench::ui;
using namespace tunebench::ui::test;

namespace {
// The visible text of a menu entry: no mnemonic '&'.
QString visible(const QString& text) {
  QString t = text;
  return t.remove(QLatin1Char('&'));
}

// The menu bar's entry at `path` ("Analysis", "What if…"), by visible text; nullptr when absent.
QAction* menu_entry(QMainWindow& w, const QStringList& path, QString* missing = nullptr) {
  QList<QAction*> level = w.menuBar()->actions();
  QAction* found = nullptr;
  for (int i = 0; i < path.size(); ++i) {
    found = nullptr;
    for (QAction* a : level)
      if (!a->isSeparator() && visible(a->text()) == path[i]) {
        found = a;
        break;
      }
    if (!found) {
      if (missing) *missing = path.mid(0, i + 1).join(QStringLiteral(" > "));
      return nullptr;
    }
    if (i + 1 < path.size()) {
      if (!found->menu()) {
        if (missing) *missing = path.mid(0, i + 1).join(QStringLiteral(" > ")) + QStringLiteral(" (not a menu)");
        return nullptr;
      }
      QMenu* menu = found->menu();
      emit menu->aboutToShow();  // menus filled when shown (Open recent) are filled now
      level = menu->actions();
    }
  }
  return found;
}

// Chooses the entry as a user does: it must be there and enabled.
void choose(QMainWindow& w, const QString& path) {
  QString missing;
  QAction* a = menu_entry(w, path.split(QStringLiteral(" > ")), &missing);
  ASSERT_NE(a, nullptr) << "not in the menu bar: " << missing.toStdString();
  ASSERT_TRUE(a->isEnabled()) << path.toStdString() << " is disabled";
  a->trigger();
}

// The newest visible top-level widget of type T that `accept` takes.
template <class T>
T* top_level(const std::function<bool(T*)>& accept = {}) {
  for (QWidget* w : QApplication::topLevelWidgets())
    if (auto* t = qobject_cast<T*>(w); t && t->isVisible() && (!accept || accept(t))) return t;
  return nullptr;
}

QFileDialog* file_dialog(const QString& title) {
  return top_level<QFileDialog>([&](QFileDialog* d) { return d->windowTitle() == title; });
}

// Answers the file dialog titled `title` with `files` (one, or several of one folder).
void answer_file_dialog(const QString& title, const QStringList& files) {
  QFileDialog* d = nullptr;
  TB_WAIT_FOR((d = file_dialog(title)) != nullptr, kTimeoutMs);
  d->setDirectory(QFileInfo(files.front()).absolutePath());
  if (files.size() == 1) {
    d->selectFile(files.front());
  } else {
    QStringList quoted;
    for (const QString& f : files) quoted << QLatin1Char('"') + QFileInfo(f).fileName() + QLatin1Char('"');
    d->selectFile(quoted.join(QLatin1Char(' ')));
  }
  // The dialog's own Open / Save button, as a click.
  auto* box = d->findChild<QDialogButtonBox*>();
  ASSERT_NE(box, nullptr);
  QAbstractButton* ok = nullptr;
  for (QAbstractButton* b : box->buttons())
    if (box->buttonRole(b) == QDialogButtonBox::AcceptRole) ok = b;
  ASSERT_NE(ok, nullptr);
  ASSERT_TRUE(ok->isEnabled()) << title.toStdString() << ": " << files.join(", ").toStdString();
  ok->click();
}

void shot(QWidget* w, const QString& name) {
  const QString dir = QStringLiteral(TUNEBENCH_WALKTHROUGH_DIR);
  QDir().mkpath(dir);
  QApplication::processEvents();
  EXPECT_TRUE(w->grab().save(QDir(dir).filePath(name + QStringLiteral(".png")))) << name.toStdString();
}

KnobField* field(MainWindow& w, const char* key) { return w.form()->field(QString::fromLatin1(key)); }

// Types a value into a form field as a user would (the field takes the focus first).
void set_field(MainWindow& w, const char* key, const QString& value) {
  QWidget* editor = field(w, key)->editor();
  editor->setFocus();
  if (auto* spin = qobject_cast<QSpinBox*>(editor)) {
    spin->selectAll();
    QTest::keyClicks(spin, value);
    QTest::keyClick(spin, Qt::Key_Tab);
  } else if (auto* combo = qobject_cast<QComboBox*>(editor)) {
    combo->setCurrentIndex(combo->findText(value));
  }
}

void choose_preset(MainWindow& w, const QString& name) {
  QComboBox* presets = w.form()->presetCombo();
  presets->setCurrentIndex(presets->findText(name));
  emit presets->activated(presets->currentIndex());  // what a click on the entry emits
}

void select_rows(MainWindow& w, const QList<int>& rows) {
  QTableView* table = w.trialsView();
  table->clearSelection();
  for (int r : rows) table->selectionModel()->select(w.trialsModel()->index(r, 0),
                                                    QItemSelectionModel::Select | QItemSelectionModel::Rows);
}

void run_from_the_menu(MainWindow& w) {
  QSignalSpy finished(&w, &MainWindow::trialFinished);
  choose(w, QStringLiteral("Trial > Run"));
  TB_WAIT_FOR(finished.size() == 1, kTimeoutMs);
}

int row_named(MainWindow& w, const QString& part) {
  for (int r = 0; r < w.trialsModel()->rowCount(); ++r)
    if (QString::fromStdString(w.trialsModel()->record(r).config.name).contains(part)) return r;
  return -1;
}

// Every **Menu > Item** path in docs/UI.md; `loose` gets menu paths not written that way.
QStringList documented_paths(QStringList* loose) {
  QFile f(QStringLiteral(TUNEBENCH_DOCS_DIR "/UI.md"));
  EXPECT_TRUE(f.open(QIODevice::ReadOnly));
  const QString text = QString::fromUtf8(f.readAll());
  QStringList paths;
  static const QRegularExpression bold(QStringLiteral(R"(\*\*((?:File|Trial|View|Analysis|Help)(?: > [^*>]+)+)\*\*)"));
  for (auto it = bold.globalMatch(text); it.hasNext();) paths << it.next().captured(1).simplified();  // wrapped lines
  // A menu path anywhere else ("Analysis → Sweep…", "Trial > Settings…" in plain text) escapes this check.
  QString rest = text;
  rest.remove(bold);
  static const QRegularExpression any(QStringLiteral(R"(\b(?:File|Trial|View|Analysis|Help) ?(?:>|→) ?\w)"));
  for (auto it = any.globalMatch(rest); it.hasNext();) *loose << it.next().captured(0);
  paths.removeDuplicates();
  return paths;
}
}  // namespace

TEST(Walkthrough, EveryMenuPathTheDocsNameIsInTheMenuBar) {
  auto w = make_window();
  QStringList loose;
  const QStringList paths = documented_paths(&loose);
  EXPECT_TRUE(loose.isEmpty()) << "menu paths in docs/UI.md not written as **Menu > Item**: "
                               << loose.join(QStringLiteral(", ")).toStdString();
  ASSERT_GT(paths.size(), 20) << "docs/UI.md lists the menus";
  for (const QString& path : paths) {
    QString missing;
    EXPECT_NE(menu_entry(*w, path.split(QStringLiteral(" > ")), &missing), nullptr)
        << "docs/UI.md names " << path.toStdString() << "; the menu bar has no " << missing.toStdString();
  }
}

TEST(Walkthrough, AsAPersonUsesTheWindow) {
  QTemporaryDir dir;
  auto w = make_window();  // a CPU-only machine, the fake worker
  w->resize(1500, 950);

  // ---- a new session of one's own ----
  const QString mine = dir.filePath(QStringLiteral("walk.tbsession"));
  choose(*w, QStringLiteral("File > New session…"));
  answer_file_dialog(QStringLiteral("New session"), {mine});
  TB_WAIT_FOR(w->session()->path() == mine, kTimeoutMs);
  EXPECT_FALSE(w->session()->isForeign());

  // ---- a CPU trial, then a 2-rank one ----
  choose_preset(*w, QStringLiteral("cpu-tiny"));
  set_field(*w, "steps", QStringLiteral("6"));
  set_field(*w, "warmup", QStringLiteral("1"));
  run_from_the_menu(*w);
  set_field(*w, "strategy", QStringLiteral("ddp"));
  set_field(*w, "world_size", QStringLiteral("2"));
  run_from_the_menu(*w);
  ASSERT_EQ(w->trialsModel()->rowCount(), 2);
  const QString single = QString::fromStdString(w->trialsModel()->record(0).config.name);
  const QString ddp = QString::fromStdString(w->trialsModel()->record(1).config.name);
  EXPECT_NE(single, ddp) << "two trials, one name";
  shot(w.get(), QStringLiteral("01-two-cpu-trials"));

  // ---- compare them ----
  select_rows(*w, {0, 1});
  choose(*w, QStringLiteral("Analysis > Compare selected trials…"));
  ComparisonWindow* cmp = nullptr;
  TB_WAIT_FOR((cmp = top_level<ComparisonWindow>()) != nullptr, kTimeoutMs);
  EXPECT_TRUE(cmp->throughputText().contains(ddp + QStringLiteral(" vs ") + single)) << cmp->throughputText().toStdString();
  EXPECT_FALSE(cmp->diagnosisView()->text().contains(QStringLiteral("GPU"))) << "CPU ranks called GPUs";
  shot(cmp, QStringLiteral("02-comparison"));
  cmp->close();

  // ---- an example, then Open recent back to one's own session ----
  choose(*w, QStringLiteral("Help > Examples and start page"));
  TB_WAIT_FOR(w->isStartPageShown(), kTimeoutMs);
  QListWidget* examples = w->startPage()->examplesList();
  QListWidgetItem* cpuExample = nullptr;
  for (int i = 0; i < examples->count() && !cpuExample; ++i)
    if (examples->item(i)->toolTip().endsWith(QStringLiteral("cpu-tiny.tbsession"))) cpuExample = examples->item(i);
  ASSERT_NE(cpuExample, nullptr);
  const QPoint at = examples->visualItemRect(cpuExample).center();
  QTest::mouseClick(examples->viewport(), Qt::LeftButton, {}, at);
  QTest::mouseDClick(examples->viewport(), Qt::LeftButton, {}, at);  // "double-click to open"
  TB_WAIT_FOR(w->session()->path() != mine && w->session()->isForeign(), kTimeoutMs);
  const QString exampleCopy = w->session()->path();
  TB_WAIT_FOR(w->jobs()->waitForIdle(kTimeoutMs), kTimeoutMs);
  shot(w.get(), QStringLiteral("03-example-opened"));
  choose(*w, QStringLiteral("File > Open recent > walk.tbsession"));
  TB_WAIT_FOR(w->session()->path() == mine, kTimeoutMs);
  TB_WAIT_FOR(w->trialsModel()->rowCount() == 2, kTimeoutMs);
  EXPECT_FALSE(w->session()->isForeign()) << "one's own session, back from Open recent, taken for a stranger's";

  // ---- What if… on 2x RTX 4090 ----
  select_rows(*w, {row_named(*w, ddp)});
  choose(*w, QStringLiteral("Analysis > What if…"));
  WhatIfDialog* whatIf = nullptr;
  TB_WAIT_FOR((whatIf = top_level<WhatIfDialog>()) != nullptr, kTimeoutMs);
  whatIf->gpuCombo()->setCurrentIndex(whatIf->gpuCombo()->findText(QStringLiteral("NVIDIA GeForce RTX 4090")));
  whatIf->gpuCount()->setValue(2);
  EXPECT_EQ(whatIf->prediction().scenario.config.world_size, 2);
  ASSERT_NE(whatIf->prediction().gpu, nullptr);
  EXPECT_EQ(whatIf->prediction().gpu->id, "rtx4090");
  shot(whatIf, QStringLiteral("04-what-if-2x4090"));
  whatIf->close();
  // The dock answers the forum's own question for the form's trial: 7B DDP on two RTX 4090s.
  choose_preset(*w, QStringLiteral("7b-ddp"));
  auto* dockGpu = w->findChild<QComboBox*>(QStringLiteral("predictionGpu"));
  ASSERT_NE(dockGpu, nullptr);
  dockGpu->setCurrentIndex(dockGpu->findText(QStringLiteral("NVIDIA GeForce RTX 4090")));
  auto* panel = w->findChild<PredictionPanel*>(QStringLiteral("predictionPanel"));
  EXPECT_EQ(panel->fit(), predict::Fit::DoesNotFit);
  EXPECT_TRUE(panel->findChild<QLabel*>(QStringLiteral("predictedMemory"))->text().contains(QStringLiteral("does not fit")));
  shot(w.get(), QStringLiteral("05-prediction-dock-7b-2x4090"));
  choose_preset(*w, QStringLiteral("cpu-tiny"));
  set_field(*w, "steps", QStringLiteral("6"));
  set_field(*w, "warmup", QStringLiteral("1"));

  // ---- Investigate… with a budget of 2 ----
  select_rows(*w, {row_named(*w, single)});
  const int before = w->trialsModel()->rowCount();
  choose(*w, QStringLiteral("Analysis > Investigate…"));
  InvestigateWindow* inv = nullptr;
  TB_WAIT_FOR((inv = top_level<InvestigateWindow>()) != nullptr, kTimeoutMs);
  TB_WAIT_FOR(inv->isPrepared() && !inv->isBusy(), kTimeoutMs);  // the plan, read in the background
  EXPECT_GT(inv->variantsTable()->rowCount(), 0);
  EXPECT_EQ(w->trialsModel()->rowCount(), before) << "nothing runs before Start";
  auto* budget = inv->findChild<QSpinBox*>(QStringLiteral("investigateBudget"));
  ASSERT_NE(budget, nullptr);
  budget->setValue(2);
  shot(inv, QStringLiteral("06-investigate-plan"));
  // Steps slow enough (the fake worker) to press Stop while the plan's first trial runs.
  qputenv("TUNEBENCH_FAKE_STEP_MS", "250");
  inv->findChild<QPushButton*>(QStringLiteral("investigateStart"))->click();
  const auto running = [&](int from) {
    for (int row = from; row < w->trialsModel()->rowCount(); ++row)
      if (w->trialsModel()->record(row).status == protocol::TrialStatus::Running) return true;
    return false;
  };
  TB_WAIT_FOR(running(before), 4 * kTimeoutMs);
  // ---- Trial > Stop in the middle: the plan pauses at once and says so; Resume goes on ----
  choose(*w, QStringLiteral("Trial > Stop"));
  TB_WAIT_FOR(!inv->isRunning(), kTimeoutMs);
  EXPECT_NE(inv->statusLabel()->text().indexOf(QStringLiteral("The plan is paused")), -1)
      << inv->statusLabel()->text().toStdString();
  EXPECT_EQ(inv->startButton()->text().remove(QLatin1Char('&')), QStringLiteral("Resume"));
  shot(inv, QStringLiteral("07-investigate-paused"));
  qputenv("TUNEBENCH_FAKE_STEP_MS", "20");
  inv->startButton()->click();
  TB_WAIT_FOR(inv->isRunning(), kTimeoutMs);
  TB_WAIT_FOR(!inv->isRunning(), 4 * kTimeoutMs);
  TB_WAIT_FOR(!w->isBusy(), kTimeoutMs);
  EXPECT_TRUE(inv->statusLabel()->text().startsWith(QStringLiteral("Done within the budget")))
      << "the plan ran to its budget, not paused again: " << inv->statusLabel()->text().toStdString();
  EXPECT_GE(w->trialsModel()->rowCount(), before + 2);  // the stopped trial stays in the table
  shot(inv, QStringLiteral("07-investigate-done"));
  inv->close();

  // ---- Find the fastest… with 1 minute ----
  choose(*w, QStringLiteral("Analysis > Find the fastest…"));
  AutotuneDialog* tune = nullptr;
  TB_WAIT_FOR((tune = top_level<AutotuneDialog>()) != nullptr, kTimeoutMs);
  auto* minutes = tune->findChild<QDoubleSpinBox*>();
  ASSERT_NE(minutes, nullptr);
  minutes->setValue(1.0);
  const int beforeTune = w->trialsModel()->rowCount();
  tune->startButton()->click();
  TB_WAIT_FOR(!tune->isBusy(), kTimeoutMs);  // the search space is scored in the background first
  // The search runs trials until its minute of trial time is spent. One finishes; Cancel while the
  // second runs stops that trial at once and the result names the best so far.
  const auto done_since = [&](int from) {
    int n = 0;
    for (int row = from; row < w->trialsModel()->rowCount(); ++row)
      n += w->trialsModel()->record(row).status == protocol::TrialStatus::Done;
    return n;
  };
  TB_WAIT_FOR(done_since(beforeTune) >= 1, 4 * kTimeoutMs);
  qputenv("TUNEBENCH_FAKE_STEP_MS", "250");
  TB_WAIT_FOR(running(beforeTune) || !tune->isRunning(), 4 * kTimeoutMs);
  ASSERT_TRUE(tune->isRunning()) << "the minute ran out before a second trial";
  // ---- Cancel in the middle ----
  tune->cancelButton()->click();
  TB_WAIT_FOR(!tune->isRunning() && !w->isBusy(), kTimeoutMs);
  qputenv("TUNEBENCH_FAKE_STEP_MS", "20");
  EXPECT_FALSE(running(beforeTune)) << "Cancel stops the running trial";
  EXPECT_EQ(tune->reportText().indexOf(QStringLiteral("no configuration ran successfully")), -1)
      << tune->reportText().toStdString();
  EXPECT_NE(tune->reportText().indexOf(QStringLiteral("best so far")), -1) << tune->reportText().toStdString();
  shot(tune, QStringLiteral("08-find-the-fastest"));
  tune->close();

  // ---- import a torch.profiler trace ----
  const QString traces = QStringLiteral(TUNEBENCH_TEST_DATA_DIR "/traces/ddp-nw4");
  QStringList traceFiles;
  for (const QString& f : QDir(traces).entryList({QStringLiteral("*.pt.trace.json.gz")}, QDir::Files, QDir::Name))
    traceFiles << QDir(traces).filePath(f);
  ASSERT_EQ(traceFiles.size(), 2);
  const int beforeImport = w->trialsModel()->rowCount();
  choose(*w, QStringLiteral("File > Import…"));
  answer_file_dialog(QStringLiteral("Import"), traceFiles);
  TB_WAIT_FOR(w->trialsModel()->rowCount() == beforeImport + 1, kTimeoutMs);
  TB_WAIT_FOR(w->jobs()->waitForIdle(kTimeoutMs), kTimeoutMs);
  w->liveView()->replotNow();
  shot(w.get(), QStringLiteral("09-trace-imported"));

  // ---- every export format ----
  select_rows(*w, {0, 1});
  const QString steps = dir.filePath(QStringLiteral("steps.csv")), all = dir.filePath(QStringLiteral("all.json")),
                summaries = dir.filePath(QStringLiteral("summaries.csv")),
                trace = dir.filePath(QStringLiteral("timeline.json"));
  choose(*w, QStringLiteral("File > Export selected trials…"));
  answer_file_dialog(QStringLiteral("Export trials"), {steps});
  TB_WAIT_FOR(QFileInfo(steps).size() > 0, kTimeoutMs);
  choose(*w, QStringLiteral("File > Export selected trials…"));
  answer_file_dialog(QStringLiteral("Export trials"), {all});
  TB_WAIT_FOR(QFileInfo(all).size() > 0, kTimeoutMs);
  choose(*w, QStringLiteral("File > Export selected trials' summaries (CSV)…"));
  answer_file_dialog(QStringLiteral("Export summaries"), {summaries});
  TB_WAIT_FOR(QFileInfo(summaries).size() > 0, kTimeoutMs);
  choose(*w, QStringLiteral("File > Export timelines (Chrome trace)…"));
  answer_file_dialog(QStringLiteral("Export timelines"), {trace});
  TB_WAIT_FOR(QFileInfo(trace).size() > 0, kTimeoutMs);
  for (const char* ext : {"png", "pdf", "svg"}) {
    const QString plot = dir.filePath(QStringLiteral("plots.") + QLatin1String(ext));
    choose(*w, QStringLiteral("File > Export plots…"));
    answer_file_dialog(QStringLiteral("Export plots"), {plot});
    TB_WAIT_FOR(QFileInfo(plot).size() > 0, kTimeoutMs);
  }
  shot(w.get(), QStringLiteral("10-after-exports"));

  w.reset();
  QFile::remove(exampleCopy);
}

#include "ui/windows/session_actions.h"

#include <fstream>

#include <QAction>
#include <QCoreApplication>
#include <QDateTime>
#include <QDir>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QInputDialog>
#include <QItemSelectionModel>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QSettings>
#include <QStackedWidget>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTableView>

#include "core/import/torch_trace_reader.h"
#include "core/store/export.h"
#include "ui/models/trials_model.h"
#include "ui/windows/launch_preview.h"
#include "ui/windows/live_view.h"
#include "ui/windows/log_pane.h"
#include "ui/windows/main_window.h"
#include "ui/windows/session_controller.h"
#include "ui/windows/start_page.h"
#include "ui/windows/trace_import_actions.h"
#include "ui/windows/trial_form.h"
#include "ui/windows/trial_notes_dialog.h"

namespace tunebench::ui {

namespace {
const QString kSessionFilter = QStringLiteral("Tunebench sessions (*.tbsession);;All files (*)");

QString with_suffix(QString path, const QString& suffix) {
  if (!path.endsWith(QLatin1Char('.') + suffix, Qt::CaseInsensitive)) path += QLatin1Char('.') + suffix;
  return path;
}

QString user_sessions_dir() {
  const QString dir = QStandardPaths::writableLocation(QStandardPaths::AppLocalDataLocation) + QStringLiteral("/sessions");
  QDir().mkpath(dir);
  return dir;
}

// `dir/base.tbsession`, or base-2, base-3, ... when taken.
QString unused_path(const QString& dir, const QString& base) {
  QString path = QDir(dir).filePath(base + QStringLiteral(".tbsession"));
  for (int i = 2; QFileInfo::exists(path); ++i) path = QDir(dir).filePath(QStringLiteral("%1-%2.tbsession").arg(base).arg(i));
  return path;
}
}  // namespace

SessionActions::SessionActions(MainWindow* window, SessionController* session, bool useSettings)
    : QObject(window), m_window(window), m_session(session), m_useSettings(useSettings) {
  if (m_useSettings) m_recent = QSettings().value(QStringLiteral("session/recent")).toStringList();

  // The centre becomes a stack: the start page while the session is empty, the live view else.
  m_startPage = new StartPage;
  QWidget* live = m_window->takeCentralWidget();
  m_centre = new QStackedWidget;
  m_centre->setObjectName(QStringLiteral("centreStack"));
  m_centre->addWidget(live);
  m_centre->addWidget(m_startPage);
  m_window->setCentralWidget(m_centre);
  m_startPage->setExamples(list_examples(examples_dir(QCoreApplication::applicationDirPath())));
  m_startPage->setRecent(m_recent);
  connect(m_startPage, &StartPage::exampleActivated, this, &SessionActions::openExample);
  connect(m_startPage, &StartPage::recentActivated, this, &SessionActions::openSession);
  connect(m_startPage, &StartPage::newTrialRequested, this, [this] {
    showStartPage(false);
    m_window->form()->setFocus();
  });

  createActions();
  connect(m_session, &SessionController::sessionChanged, this, &SessionActions::updateTitle);
  connect(m_session, &SessionController::trialCountChanged, this, [this](int count) {
    if (!m_window->isBusy()) showStartPage(count == 0);
    updateTrialActions();
  });
  connect(m_session, &SessionController::storeFailed, this,
          [this](const QString& message) { m_window->logPane()->appendError(QStringLiteral("session: %1").arg(message)); });

  m_window->setAcceptDrops(true);
  m_window->installEventFilter(this);
  m_traceImport = new TraceImportActions(m_window, m_session, this);
}

void SessionActions::createActions() {
  auto make = [this](const char* name, const QString& text, const QKeySequence& key, const QString& tip) {
    auto* a = new QAction(text, m_window);
    a->setObjectName(QLatin1String(name));
    if (!key.isEmpty()) a->setShortcut(key);
    a->setStatusTip(tip);
    a->setToolTip(tip);
    return a;
  };
  QAction* newAct = make("actionNewSession", QStringLiteral("&New session…"), QKeySequence::New, QStringLiteral("Start a new, empty session file"));
  QAction* open = make("actionOpenSession", QStringLiteral("&Open session…"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_O),
                       QStringLiteral("Open a .tbsession file (checked before anything is read into the window)"));
  QAction* saveAs = make("actionSaveSessionAs", QStringLiteral("Save session &as…"), QKeySequence::SaveAs,
                         QStringLiteral("Write a compact, self-contained copy of the session and continue in it"));
  QAction* import =
      make("actionImportLog", QStringLiteral("&Import event log or traces…"), QKeySequence(Qt::CTRL | Qt::Key_I),
           QStringLiteral("Add a worker's .jsonl event log (headless or remote run), or the per-rank "
                          "torch.profiler traces of your own job, to the session as a trial"));
  QAction* exportTrialsAct = make("actionExportTrials", QStringLiteral("Export selected &trials…"), {},
                                  QStringLiteral("Per-step table (CSV) or everything (JSON) of the selected trials"));
  QAction* exportSummaries = make("actionExportSummaries", QStringLiteral("Export selected trials' &summaries (CSV)…"), {},
                                  QStringLiteral("One row per rank per trial: the done summaries"));
  QAction* exportTrace = make("actionExportTrace", QStringLiteral("Export &timeline (Chrome trace)…"), {},
                              QStringLiteral("The selected trial's phases for Perfetto / chrome://tracing"));
  QAction* rename = make("actionRenameTrial", QStringLiteral("Re&name trial…"), QKeySequence(Qt::Key_F2), QStringLiteral("Rename the selected trial"));
  QAction* del = make("actionDeleteTrial", QStringLiteral("&Delete trial…"), QKeySequence::Delete,
                      QStringLiteral("Delete the selected trials and all their records from the session"));
  QAction* again = make("actionRunAgain", QStringLiteral("Run a&gain with changes"), QKeySequence(Qt::CTRL | Qt::Key_D),
                        QStringLiteral("Load the selected trial's configuration into the form"));
  QAction* annotate = make("actionAnnotateTrial", QStringLiteral("&Annotate trial…"), {}, QStringLiteral("Notes and tags of the selected trial"));
  QAction* examples = make("actionExamples", QStringLiteral("&Examples and start page"), {}, QStringLiteral("Show the example sessions"));
  m_trialActions = {exportTrialsAct, exportSummaries, exportTrace, rename, del, again, annotate};
  // Delete and F2 belong to the table: a window-wide Delete would fire in every text field.
  for (QAction* a : {rename, del}) a->setShortcutContext(Qt::WidgetWithChildrenShortcut);
  m_window->trialsView()->addActions({rename, del});

  connect(newAct, &QAction::triggered, this, [this] {
    const QString path = QFileDialog::getSaveFileName(m_window, QStringLiteral("New session"), user_sessions_dir(), kSessionFilter);
    if (!path.isEmpty()) newSession(with_suffix(path, QStringLiteral("tbsession")));
  });
  connect(open, &QAction::triggered, this, [this] {
    const QString path = QFileDialog::getOpenFileName(m_window, QStringLiteral("Open session"), user_sessions_dir(), kSessionFilter);
    if (!path.isEmpty()) openSession(path);
  });
  connect(saveAs, &QAction::triggered, this, [this] {
    const QString path = askSavePath(QStringLiteral("Save session as"), m_session->sessionName() + QStringLiteral(".tbsession"), kSessionFilter);
    if (!path.isEmpty()) saveSessionAs(with_suffix(path, QStringLiteral("tbsession")));
  });
  connect(import, &QAction::triggered, this, [this] {
    const QStringList paths = QFileDialog::getOpenFileNames(
        m_window, QStringLiteral("Import an event log, or one run's torch.profiler traces (one per rank)"), {},
        QStringLiteral("Event logs and torch.profiler traces (*.jsonl *.json *.json.gz *.gz);;All files (*)"));
    if (!paths.isEmpty()) importFiles(paths);
  });
  connect(exportTrialsAct, &QAction::triggered, this, [this] {
    const QString path = askSavePath(QStringLiteral("Export trials"), QStringLiteral("trials.csv"),
                                     QStringLiteral("Per-step table (*.csv);;Everything (*.json)"));
    if (!path.isEmpty()) exportTrials(selectedTrialIds(), path);
  });
  connect(exportSummaries, &QAction::triggered, this, [this] {
    const QString path = askSavePath(QStringLiteral("Export summaries"), QStringLiteral("summaries.csv"), QStringLiteral("CSV (*.csv)"));
    if (!path.isEmpty()) exportSummariesCsv(selectedTrialIds(), with_suffix(path, QStringLiteral("csv")));
  });
  connect(exportTrace, &QAction::triggered, this, [this] {
    const QStringList ids = selectedTrialIds();
    if (ids.isEmpty()) return;
    const QString path = askSavePath(QStringLiteral("Export timeline"), QStringLiteral("timeline.json"),
                                     QStringLiteral("Chrome trace (*.json)"));
    if (!path.isEmpty()) exportChromeTrace(ids.first(), with_suffix(path, QStringLiteral("json")));
  });
  connect(rename, &QAction::triggered, this, [this] {
    const QStringList ids = selectedTrialIds();
    if (ids.isEmpty()) return;
    const auto info = m_session->trialInfo(ids.first());
    bool ok = false;
    const QString name = QInputDialog::getText(m_window, QStringLiteral("Rename trial"), QStringLiteral("Name:"), QLineEdit::Normal,
                                               info ? QString::fromStdString(info->name) : QString(), &ok);
    if (ok && !m_session->renameTrial(ids.first(), name.trimmed())) showError(QStringLiteral("Rename trial"), m_session->errorString());
  });
  connect(del, &QAction::triggered, this, [this] {
    const QStringList ids = selectedTrialIds();
    if (ids.isEmpty()) return;
    if (QMessageBox::question(m_window, QStringLiteral("Delete trials"),
                              QStringLiteral("Delete %1 trial(s) and all their records from the session? This cannot be undone.").arg(ids.size()),
                              QMessageBox::Yes | QMessageBox::Cancel, QMessageBox::Cancel) != QMessageBox::Yes)
      return;
    for (const QString& id : ids)
      if (!m_session->deleteTrial(id)) showError(QStringLiteral("Delete trial"), m_session->errorString());
  });
  connect(again, &QAction::triggered, this, [this] {
    const QStringList ids = selectedTrialIds();
    if (!ids.isEmpty()) rerunWithChanges(ids.first());
  });
  connect(annotate, &QAction::triggered, this, [this] {
    const QStringList ids = selectedTrialIds();
    const auto info = ids.isEmpty() ? std::nullopt : m_session->trialInfo(ids.first());
    if (!info) return;
    QStringList tags;
    for (const std::string& t : info->tags) tags << QString::fromStdString(t);
    TrialNotesDialog dialog(QString::fromStdString(info->name), QString::fromStdString(info->notes), tags, m_window);
    if (dialog.exec() == QDialog::Accepted && !m_session->annotateTrial(ids.first(), dialog.notes(), dialog.tags()))
      showError(QStringLiteral("Annotate trial"), m_session->errorString());
  });
  connect(examples, &QAction::triggered, this, [this] { showStartPage(true); });

  // File menu: session entries first, the window's own (replay, export plots, quit) after them.
  QMenu* file = m_window->menu(QStringLiteral("menuFile"));
  QAction* first = file->actions().value(0);
  m_recentMenu = new QMenu(QStringLiteral("Open &recent"), file);
  m_recentMenu->setObjectName(QStringLiteral("menuRecent"));
  for (QAction* a : {newAct, open}) file->insertAction(first, a);
  file->insertMenu(first, m_recentMenu);
  for (QAction* a : {saveAs, import}) file->insertAction(first, a);
  file->insertSeparator(first);
  for (QAction* a : {exportTrialsAct, exportSummaries, exportTrace}) file->insertAction(first, a);
  rebuildRecentMenu();

  QMenu* trial = m_window->menu(QStringLiteral("menuTrial"));
  trial->addSeparator();
  for (QAction* a : {again, rename, annotate, del}) trial->addAction(a);
  for (QMenu* m : m_window->menuBar()->findChildren<QMenu*>())
    if (m->title() == QStringLiteral("&Help")) m->insertAction(m->actions().value(0), examples);

  m_contextMenu = new QMenu(m_window->trialsView());
  for (QAction* a : {again, rename, annotate}) m_contextMenu->addAction(a);
  m_contextMenu->addSeparator();
  for (QAction* a : {exportTrialsAct, exportSummaries, exportTrace}) m_contextMenu->addAction(a);
  m_contextMenu->addSeparator();
  m_contextMenu->addAction(del);
  QTableView* table = m_window->trialsView();
  table->setContextMenuPolicy(Qt::CustomContextMenu);
  connect(table, &QWidget::customContextMenuRequested, this,
          [this, table](const QPoint& pos) { m_contextMenu->popup(table->viewport()->mapToGlobal(pos)); });
  connect(table->selectionModel(), &QItemSelectionModel::selectionChanged, this, &SessionActions::updateTrialActions);
  updateTrialActions();
}

void SessionActions::openInitialSession(const QString& sessionPath) {
  bool ok = false;
  if (!sessionPath.isEmpty()) {
    ok = QFileInfo::exists(sessionPath) ? openSession(sessionPath) : newSession(sessionPath);
  } else if (m_useSettings) {
    const QString last = QSettings().value(QStringLiteral("session/last")).toString();
    if (!last.isEmpty() && QFileInfo::exists(last)) ok = m_session->openSession(last, false);  // ours: we made it
    if (!ok) {
      const QString stamp = QDateTime::currentDateTime().toString(QStringLiteral("yyyyMMdd-HHmmss"));
      ok = newSession(unused_path(user_sessions_dir(), QStringLiteral("session-") + stamp));
    }
    if (ok) QSettings().setValue(QStringLiteral("session/last"), m_session->path());
  }
  // Tests and --no-restore: a throw-away session, so the window still always has one.
  if (!ok && !m_session->newScratchSession()) m_window->logPane()->appendError(m_session->errorString());
  updateTitle();
  showStartPage(m_window->trialsModel()->rowCount() == 0);
}

bool SessionActions::newSession(const QString& path) {
  if (m_window->isBusy()) {
    showError(QStringLiteral("New session"), QStringLiteral("A trial is running; stop it before switching sessions."));
    return false;
  }
  if (!m_session->newSession(path)) {
    showError(QStringLiteral("New session"), m_session->errorString());
    return false;
  }
  addRecent(path);
  return true;
}

bool SessionActions::openSession(const QString& path) {
  if (m_window->isBusy()) {
    showError(QStringLiteral("Open session"), QStringLiteral("A trial is running; stop it before switching sessions."));
    return false;
  }
  // A file opened from disk may come from anyone: its configs are shown before they run.
  if (!m_session->openSession(path, true)) {
    showError(QStringLiteral("Open session"),
              QStringLiteral("%1 was not opened: %2\nNothing was changed (the current session stays open).")
                  .arg(QFileInfo(path).fileName(), m_session->errorString()));
    return false;
  }
  addRecent(path);
  m_window->statusBar()->showMessage(QStringLiteral("Opened %1 (%2 trials)").arg(path).arg(m_window->trialsModel()->rowCount()), 6000);
  return true;
}

bool SessionActions::openExample(const QString& examplePath) {
  // Examples are opened as a copy: the shipped file may sit in a read-only install folder, and a
  // run or an edit must never change it.
  const QString copy = unused_path(user_sessions_dir(), QFileInfo(examplePath).completeBaseName());
  if (!QFile::copy(examplePath, copy)) {
    showError(QStringLiteral("Open example"), QStringLiteral("Could not copy %1 to %2.").arg(examplePath, copy));
    return false;
  }
  QFile::setPermissions(copy, QFile::permissions(copy) | QFileDevice::WriteOwner);
  if (!openSession(copy)) {
    QFile::remove(copy);
    return false;
  }
  return true;
}

bool SessionActions::saveSessionAs(const QString& path) {
  if (!m_session->saveAs(path)) {
    showError(QStringLiteral("Save session as"), m_session->errorString());
    return false;
  }
  addRecent(path);
  m_window->statusBar()->showMessage(QStringLiteral("Saved %1").arg(path), 6000);
  return true;
}

bool SessionActions::importLog(const QString& jsonlPath) {
  const auto result = m_session->importLog(jsonlPath);
  if (!result) {
    showError(QStringLiteral("Import event log"),
              QStringLiteral("%1 was not imported: %2").arg(QFileInfo(jsonlPath).fileName(), m_session->errorString()));
    return false;
  }
  QString message = QStringLiteral("Imported %1: %2 records, %3 unreadable line(s)")
                        .arg(QFileInfo(jsonlPath).fileName())
                        .arg(result->events)
                        .arg(result->problems);
  m_window->statusBar()->showMessage(message, 10000);
  m_window->logPane()->appendLine({-1, LogLine::Source::Runner, message});
  for (const auto& p : result->problem_list)
    m_window->logPane()->appendLine({-1, LogLine::Source::Runner,
                                     QStringLiteral("  line %1: %2").arg(p.line_number).arg(QString::fromStdString(p.message))});
  return true;
}

bool SessionActions::importFiles(const QStringList& files) {
  QStringList traces;
  bool ok = true;
  for (const QString& f : files) {
    if (f.endsWith(QStringLiteral(".tbsession"), Qt::CaseInsensitive)) {
      ok = openSession(f) && ok;
      continue;
    }
    try {
      switch (import::detect_file_kind(f.toStdString())) {
        case import::FileKind::TorchTrace:
          traces << f;
          break;
        case import::FileKind::EventLog:
          ok = importLog(f) && ok;
          break;
        case import::FileKind::Unknown:
          showError(QStringLiteral("Import"),
                    QStringLiteral("%1 is neither a Tunebench event log (JSON lines with a \"type\") nor a "
                                   "torch.profiler trace (Chrome-trace JSON with \"traceEvents\", plain or gzip).")
                        .arg(QFileInfo(f).fileName()));
          ok = false;
          break;
      }
    } catch (const std::exception& e) {
      showError(QStringLiteral("Import"), QString::fromStdString(e.what()));
      ok = false;
    }
  }
  if (!traces.isEmpty()) ok = m_traceImport->importTraces(traces) && ok;
  return ok;
}

bool SessionActions::exportTrials(const QStringList& recordIds, const QString& path) {
  std::vector<store::LoadedTrial> trials;
  for (const QString& id : recordIds)
    if (auto t = m_session->loadTrial(id)) trials.push_back(std::move(*t));
  if (trials.empty()) {
    showError(QStringLiteral("Export trials"), QStringLiteral("Select the trials to export in the trials table first."));
    return false;
  }
  std::ofstream out(path.toStdString());
  if (path.endsWith(QStringLiteral(".json"), Qt::CaseInsensitive)) out << store::trials_to_json(trials).dump(2) << '\n';
  else store::write_steps_csv(trials, out);
  if (!out.good()) {
    showError(QStringLiteral("Export trials"), QStringLiteral("Could not write %1.").arg(path));
    return false;
  }
  m_window->statusBar()->showMessage(QStringLiteral("Wrote %1 trial(s) to %2").arg(trials.size()).arg(path), 6000);
  return true;
}

bool SessionActions::exportSummariesCsv(const QStringList& recordIds, const QString& path) {
  std::vector<store::LoadedTrial> trials;
  for (const QString& id : recordIds)
    if (auto t = m_session->loadTrial(id)) trials.push_back(std::move(*t));
  std::ofstream out(path.toStdString());
  store::write_summaries_csv(trials, out);
  if (trials.empty() || !out.good()) {
    showError(QStringLiteral("Export summaries"), QStringLiteral("Nothing written to %1.").arg(path));
    return false;
  }
  return true;
}

bool SessionActions::exportChromeTrace(const QString& recordId, const QString& path) {
  const auto trial = m_session->loadTrial(recordId);
  if (!trial) {
    showError(QStringLiteral("Export timeline"), QStringLiteral("This trial is not in the session (a replay is not stored)."));
    return false;
  }
  std::ofstream out(path.toStdString());
  out << store::chrome_trace(*trial).dump() << '\n';
  if (!out.good()) {
    showError(QStringLiteral("Export timeline"), QStringLiteral("Could not write %1.").arg(path));
    return false;
  }
  m_window->statusBar()->showMessage(QStringLiteral("Wrote %1 (open it in Perfetto or chrome://tracing)").arg(path), 8000);
  return true;
}

bool SessionActions::rerunWithChanges(const QString& recordId) {
  const auto info = m_session->trialInfo(recordId);
  if (!info) return false;
  const auto parsed = config::from_json(info->config);
  config::TrialConfig c = parsed.config;
  c.name = info->name + " (again)";
  m_window->form()->setConfig(c);
  m_session->setPendingStoredConfig(true, QStringLiteral("duplicate of trial %1").arg(info->id));
  showStartPage(false);
  m_window->statusBar()->showMessage(QStringLiteral("Loaded %1 into the form: change what you want, then Run")
                                         .arg(QString::fromStdString(info->name)), 8000);
  return true;
}

bool SessionActions::confirmLaunch(const TrialRequest& request) {
  LaunchPreviewDialog dialog(launch_preview(request.config, request.worker_program, request.id),
                             QFileInfo(m_session->path()).fileName(), m_window);
  return dialog.exec() == QDialog::Accepted;
}

QStringList SessionActions::selectedTrialIds() const {
  QStringList ids;
  const QModelIndexList rows = m_window->trialsView()->selectionModel()->selectedRows();
  for (const QModelIndex& i : rows) ids << i.data(TrialsModel::TrialIdRole).toString();
  return ids;
}

void SessionActions::showStartPage(bool show) {
  if (show) m_startPage->setRecent(m_recent);
  m_centre->setCurrentIndex(show ? 1 : 0);
}

bool SessionActions::isStartPageShown() const { return m_centre->currentWidget() == m_startPage; }

bool SessionActions::eventFilter(QObject* watched, QEvent* event) {
  if (watched != m_window) return false;
  auto sessionOrLog = [](const QMimeData* mime) {
    QStringList files;
    if (!mime || !mime->hasUrls()) return files;
    for (const QUrl& url : mime->urls()) {
      const QString f = url.toLocalFile();
      for (const char* suffix : {".tbsession", ".jsonl", ".json", ".gz"})
        if (f.endsWith(QLatin1String(suffix), Qt::CaseInsensitive)) {
          files << f;
          break;
        }
    }
    return files;
  };
  if (event->type() == QEvent::DragEnter || event->type() == QEvent::DragMove) {
    auto* e = static_cast<QDragMoveEvent*>(event);
    if (!sessionOrLog(e->mimeData()).isEmpty()) e->acceptProposedAction();
    return true;
  }
  if (event->type() == QEvent::Drop) {
    auto* e = static_cast<QDropEvent*>(event);
    const QStringList files = sessionOrLog(e->mimeData());
    importFiles(files);
    if (!files.isEmpty()) e->acceptProposedAction();
    return true;
  }
  return false;
}

void SessionActions::updateTitle() {
  const QString path = m_session->path();
  m_window->setWindowTitle(path.isEmpty() ? QStringLiteral("Tunebench")
                                          : QStringLiteral("%1 — %2 — Tunebench").arg(m_session->sessionName(), QFileInfo(path).fileName()));
  m_window->setWindowFilePath(path);
}

void SessionActions::updateTrialActions() {
  const bool any = m_window->trialsView()->selectionModel() && m_window->trialsView()->selectionModel()->hasSelection();
  for (QAction* a : m_trialActions) a->setEnabled(any);
}

void SessionActions::addRecent(const QString& path) {
  const QString abs = QFileInfo(path).absoluteFilePath();
  m_recent.removeAll(abs);
  m_recent.prepend(abs);
  while (m_recent.size() > kMaxRecent) m_recent.removeLast();
  if (m_useSettings) {
    QSettings settings;
    settings.setValue(QStringLiteral("session/recent"), m_recent);
    settings.setValue(QStringLiteral("session/last"), abs);
  }
  rebuildRecentMenu();
  m_startPage->setRecent(m_recent);
}

void SessionActions::rebuildRecentMenu() {
  m_recentMenu->clear();
  for (const QString& p : m_recent)
    m_recentMenu->addAction(QFileInfo(p).fileName(), this, [this, p] { openSession(p); })->setToolTip(p);
  m_recentMenu->setEnabled(!m_recent.isEmpty());
}

void SessionActions::showError(const QString& title, const QString& message) {
  m_lastError = message;
  m_window->logPane()->appendError(QStringLiteral("%1: %2").arg(title, message));
  if (m_lastBox) m_lastBox->close();
  m_lastBox = new QMessageBox(QMessageBox::Warning, title, message, QMessageBox::Ok, m_window);
  m_lastBox->setObjectName(QStringLiteral("sessionErrorBox"));
  m_lastBox->setAttribute(Qt::WA_DeleteOnClose);
  connect(m_lastBox, &QObject::destroyed, this, [this, box = m_lastBox] {
    if (m_lastBox == box) m_lastBox = nullptr;
  });
  m_lastBox->open();
}

QString SessionActions::askSavePath(const QString& title, const QString& fileName, const QString& filter) {
  return QFileDialog::getSaveFileName(m_window, title, QDir(QDir::homePath()).filePath(fileName), filter);
}

}  // namespace tunebench::ui

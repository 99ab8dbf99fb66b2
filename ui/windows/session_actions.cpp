#include "ui/windows/session_actions.h"

#include <QAction>
#include <QDateTime>
#include <QDir>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QInputDialog>
#include <QItemSelectionModel>
#include <QMenu>
#include <QMessageBox>
#include <QMimeData>
#include <QSettings>
#include <QStandardPaths>
#include <QUrl>

#include "core/report/embedded_session.h"
#include "ui/models/trials_model.h"
#include "ui/runner/background_jobs.h"
#include "ui/windows/dialog_front.h"
#include "ui/windows/session_controller.h"
#include "ui/windows/trial_notes_dialog.h"

namespace tunebench::ui {

namespace {
const QString kSessionFilter = QStringLiteral("Tunebench sessions (*.tbsession);;All files (*)");
// Open also takes a report: the trials it carries become a new session.
const QString kOpenFilter = QStringLiteral(
    "Tunebench sessions and reports (*.tbsession *.html);;Tunebench sessions (*.tbsession);;Tunebench reports "
    "(*.html);;All files (*)");

bool is_html(const QString& path) {
  return path.endsWith(QStringLiteral(".html"), Qt::CaseInsensitive) ||
         path.endsWith(QStringLiteral(".htm"), Qt::CaseInsensitive);
}

QString with_suffix(QString path, const QString& suffix) {
  if (!path.endsWith(QLatin1Char('.') + suffix, Qt::CaseInsensitive)) path += QLatin1Char('.') + suffix;
  return path;
}

// A name is taken when the file or any of SQLite's side files exists: a leftover `-wal` from a
// session deleted while open would otherwise be replayed into the new file and corrupt it.
bool path_taken(const QString& path) {
  for (const char* suffix : {"", "-wal", "-shm", "-journal"})
    if (QFileInfo::exists(path + QLatin1String(suffix))) return true;
  return false;
}

// `dir/base.tbsession`, or base-2, base-3, ... when taken.
QString unused_path(const QString& dir, const QString& base) {
  QString path = QDir(dir).filePath(base + QStringLiteral(".tbsession"));
  for (int i = 2; path_taken(path); ++i) path = QDir(dir).filePath(QStringLiteral("%1-%2.tbsession").arg(base).arg(i));
  return path;
}

QStringList local_files(const QMimeData* mime) {
  QStringList files;
  if (mime && mime->hasUrls())
    for (const QUrl& url : mime->urls())
      if (url.isLocalFile()) files << url.toLocalFile();
  return files;
}
}  // namespace

QString user_sessions_dir() {
  // GenericDataLocation + our folder, not AppLocalDataLocation: that one already appends
  // organisation and application ("tunebench/tunebench").
  const QString dir =
      QStandardPaths::writableLocation(QStandardPaths::GenericDataLocation) + QStringLiteral("/tunebench/sessions");
  QDir().mkpath(dir);
  return dir;
}

SessionActions::SessionActions(SessionController* session, TrialsModel* trials, QItemSelectionModel* selection,
                               QWidget* dialogParent, bool useSettings, QObject* parent)
    : QObject(parent),
      m_session(session),
      m_trials(trials),
      m_selection(selection),
      m_parent(dialogParent),
      m_useSettings(useSettings) {
  setObjectName(QStringLiteral("sessionActions"));
  if (m_useSettings) {
    m_recent = QSettings().value(QStringLiteral("session/recent")).toStringList();
    m_own = QSettings().value(QStringLiteral("session/own")).toStringList();
    m_exportDir = QSettings().value(QStringLiteral("export/lastDir")).toString();
  }
  if (m_exportDir.isEmpty() || !QFileInfo(m_exportDir).isDir()) m_exportDir = QDir::homePath();
  addImporter({QStringLiteral("Event logs"),
               {QStringLiteral("*.jsonl")},
               [](const QString& path) { return path.endsWith(QStringLiteral(".jsonl"), Qt::CaseInsensitive); },
               [this](const QStringList& paths) {
                 bool ok = true;
                 for (const QString& path : paths) ok = importLog(path) && ok;
                 return ok;
               }});
  // A report written by Tunebench carries its trials (File > Open makes them a new session).
  addImporter({QStringLiteral("Tunebench reports"),
               {QStringLiteral("*.html")},
               [](const QString& path) { return report::is_report_file(path.toStdString()); },
               [this](const QStringList& paths) {
                 bool ok = true;
                 for (const QString& path : paths) ok = importReport(path) && ok;
                 return ok;
               }});
  createActions();

  connect(m_session, &SessionController::trialCountChanged, this, [this](int) { updateTrialActions(); });
  connect(m_session, &SessionController::openFailed, this, [this](const QString& path, const QString& message) {
    emit statusMessage(QStringLiteral("%1 was not opened").arg(QFileInfo(path).fileName()), 8000);  // not "Opening…"
    showError(QStringLiteral("Open session"),
              QStringLiteral("%1 was not opened: %2\nNothing was changed (the current session stays open).")
                  .arg(QFileInfo(path).fileName(), message));
  });
  connect(m_session, &SessionController::sessionChanged, this, [this] {
    if (!m_session->path().isEmpty() && !m_session->isScratch()) addRecent(m_session->path());
    // Another session (not Save As continuing in its copy): what was said about the last one is old.
    const QString path = QFileInfo(m_session->path()).absoluteFilePath();
    if (path == m_current) return;
    const bool continued = path == m_continuesIn;
    m_current = path;
    m_continuesIn.clear();
    if (!continued) emit sessionSwitched();
  });
  connect(m_session, &SessionController::savedAs, this, [this](const QString& path) {
    m_continuesIn = QFileInfo(path).absoluteFilePath();
    emit statusMessage(QStringLiteral("Saved %1").arg(path), 6000);
  });
  connect(m_session, &SessionController::exported, this, [this](const QString& path, int n) {
    emit statusMessage(QStringLiteral("Wrote %1 trial(s) to %2").arg(n).arg(path), 8000);
  });
  connect(
      m_session, &SessionController::imported, this,
      [this](const QString& path, const store::ImportResult& result, const QString&) {
        const QString message = QStringLiteral("Imported %1: %2 records, %3 unreadable line(s)")
                                    .arg(QFileInfo(path).fileName())
                                    .arg(result.events)
                                    .arg(result.problems);
        emit statusMessage(message, 10000);
        emit logMessage(message);
        for (const auto& p : result.problem_list)
          emit logMessage(QStringLiteral("  line %1: %2").arg(p.line_number).arg(QString::fromStdString(p.message)));
      });
  connect(m_session->jobs(), &BackgroundJobs::jobFailed, this, [this](const JobFailure& f) {
    switch (f.kind) {
      case JobKind::OpenSession:  // openFailed does not fire for a file that failed its checks
        emit statusMessage(QStringLiteral("%1 was not opened").arg(f.subject), 8000);  // not "Opening…" still
        showError(QStringLiteral("Open session"),
                  QStringLiteral("%1 was not opened: %2\nNothing was changed (the current session stays open).")
                      .arg(f.subject, f.message),
                  f.details);
        break;
      case JobKind::ImportLog:
      case JobKind::ImportTraces:
        showError(
            QStringLiteral("Import"),
            QStringLiteral("%1 was not imported: %2\nNothing was added to the session.").arg(f.subject, f.message),
                  f.details);
        break;
      case JobKind::LoadTrial:
        showError(QStringLiteral("Load trial"), QStringLiteral("Could not load %1: %2").arg(f.subject, f.message),
                  f.details);
        break;
      case JobKind::DeleteTrial:
        showError(QStringLiteral("Delete trial"),
                  QStringLiteral("Could not delete %1: %2\nIt is still in the session.").arg(f.subject, f.message),
                  f.details);
        break;
      default:
        showError(f.title, f.message, f.details);
    }
  });
  connect(m_session, &SessionController::storeFailed, this,
          [this](const QString& message) { emit errorLogged(QStringLiteral("session: %1").arg(message)); });
  connect(m_session, &SessionController::storeRecovered, this, [this] {
    emit logMessage(QStringLiteral("session: writing works again; the held-back events are recorded"));
  });
}

void SessionActions::addImporter(const Importer& importer) { m_importers << importer; }

QString SessionActions::importFilter() const {
  QStringList filters;
  QStringList all;
  for (const Importer& i : m_importers) {
    filters << QStringLiteral("%1 (%2)").arg(i.name, i.patterns.join(QLatin1Char(' ')));
    all << i.patterns;
  }
  filters.prepend(QStringLiteral("Everything Tunebench imports (%1)").arg(all.join(QLatin1Char(' '))));
  filters << QStringLiteral("All files (*)");
  return filters.join(QStringLiteral(";;"));
}

void SessionActions::createActions() {
  auto make = [this](const char* name, const QString& text, const QKeySequence& key, const QString& tip) {
    auto* a = new QAction(text, this);
    a->setObjectName(QLatin1String(name));
    if (!key.isEmpty()) a->setShortcut(key);
    a->setStatusTip(tip);
    a->setToolTip(tip);
    return a;
  };
  QAction* newAct = make("actionNewSession", QStringLiteral("&New session…"), QKeySequence(Qt::CTRL | Qt::Key_N),
                         QStringLiteral("Start a new, empty session file"));
  QAction* open =
      make("actionOpenSession", QStringLiteral("&Open session…"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_O),
           QStringLiteral("Open a .tbsession file (checked before anything is read into the window)"));
  // Spelled out: QKeySequence::SaveAs is empty on some platforms (and offscreen).
  QAction* saveAs =
      make("actionSaveSessionAs", QStringLiteral("Save session &as…"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_S),
           QStringLiteral("Write a compact, self-contained copy of the session and continue in it"));
  QAction* import =
      make("actionImportLog", QStringLiteral("&Import…"), QKeySequence(Qt::CTRL | Qt::Key_I),
           QStringLiteral("Add a run recorded elsewhere to the session as a trial (a worker's .jsonl event log, ...)"));
  QAction* exportTrialsAct = make("actionExportTrials", QStringLiteral("Export selected &trials…"), {},
                                  QStringLiteral("Per-step table (CSV) or everything (JSON) of the selected trials"));
  QAction* exportSummaries = make("actionExportSummaries", QStringLiteral("Export selected trials' &summaries (CSV)…"),
                                  {}, QStringLiteral("One row per rank per trial: the done summaries"));
  QAction* exportTrace = make(
      "actionExportTrace", QStringLiteral("Export &timelines (Chrome trace)…"), {},
      QStringLiteral("The selected trials' phases for Perfetto / chrome://tracing: one process per trial and rank"));
  QAction* rename = make("actionRenameTrial", QStringLiteral("Re&name trial…"), QKeySequence(Qt::Key_F2),
                         QStringLiteral("Rename the selected trial"));
  QAction* del = make("actionDeleteTrial", QStringLiteral("&Delete trial…"), QKeySequence::Delete,
                      QStringLiteral("Delete the selected trials and all their records from the session"));
  QAction* again = make("actionRunAgain", QStringLiteral("Run a&gain with changes"), QKeySequence(Qt::CTRL | Qt::Key_D),
                        QStringLiteral("Load the selected trial's configuration into the form"));
  QAction* annotate = make("actionAnnotateTrial", QStringLiteral("&Annotate trial…"), {},
                           QStringLiteral("Notes and tags of the selected trial"));
  m_examples = make("actionExamples", QStringLiteral("&Examples and start page"), {},
                    QStringLiteral("Show the example sessions"));
  QAction* exportReportAct =
      make("actionExportReport", QStringLiteral("Export &report (HTML or Markdown)…"), {},
           QStringLiteral("One self-contained HTML file with the comparison, plots, diagnosis and the trials themselves "
                          "(opens in any browser, and in Tunebench), or a Markdown summary for a forum post"));
  m_trialActions = {exportTrialsAct, exportSummaries, exportTrace, exportReportAct, rename, del, again, annotate};
  m_trialMenuActions = {again, rename, annotate, del};
  // Delete and F2 belong to the table (the window adds them to it): a window-wide Delete would
  // fire in every text field.
  for (QAction* a : {rename, del}) a->setShortcutContext(Qt::WidgetWithChildrenShortcut);

  connect(newAct, &QAction::triggered, this, [this] {
    auto* d = new QFileDialog(m_parent, QStringLiteral("New session"), user_sessions_dir(), kSessionFilter);
    d->setAcceptMode(QFileDialog::AcceptSave);
    d->setAttribute(Qt::WA_DeleteOnClose);
    connect(d, &QFileDialog::fileSelected, this,
            [this](const QString& path) { newSession(with_suffix(path, QStringLiteral("tbsession"))); });
    open_in_front(d);
  });
  connect(open, &QAction::triggered, this, [this] {
    auto* d = new QFileDialog(m_parent, QStringLiteral("Open session"), user_sessions_dir(), kOpenFilter);
    d->setFileMode(QFileDialog::ExistingFile);
    d->setAttribute(Qt::WA_DeleteOnClose);
    connect(d, &QFileDialog::fileSelected, this, [this](const QString& path) { openSession(path); });
    open_in_front(d);
  });
  connect(saveAs, &QAction::triggered, this, [this] {
    askSavePath(QStringLiteral("Save session as"), m_session->sessionName() + QStringLiteral(".tbsession"),
                kSessionFilter,
                [this](const QString& path) { saveSessionAs(with_suffix(path, QStringLiteral("tbsession"))); });
  });
  connect(import, &QAction::triggered, this, [this] {
    auto* d = new QFileDialog(m_parent, QStringLiteral("Import"), m_exportDir, importFilter());
    d->setFileMode(QFileDialog::ExistingFiles);  // one run's traces are one file per rank
    d->setAttribute(Qt::WA_DeleteOnClose);
    connect(d, &QFileDialog::filesSelected, this, [this](const QStringList& paths) { importFiles(paths); });
    open_in_front(d);
  });
  connect(exportReportAct, &QAction::triggered, this, [this] { askExportReport(selectedTrialIds()); });
  connect(exportTrialsAct, &QAction::triggered, this, [this] {
    const QStringList ids = selectedTrialIds();
    askSavePath(QStringLiteral("Export trials"), QStringLiteral("trials.csv"),
                QStringLiteral("Per-step table (*.csv);;Everything (*.json)"),
                [this, ids](const QString& path) { exportTrials(ids, path); });
  });
  connect(exportSummaries, &QAction::triggered, this, [this] {
    const QStringList ids = selectedTrialIds();
    askSavePath(
        QStringLiteral("Export summaries"), QStringLiteral("summaries.csv"), QStringLiteral("CSV (*.csv)"),
        [this, ids](const QString& path) { exportSummariesCsv(ids, with_suffix(path, QStringLiteral("csv"))); });
  });
  connect(exportTrace, &QAction::triggered, this, [this] {
    const QStringList ids = selectedTrialIds();
    if (ids.isEmpty()) return;
    askSavePath(
        QStringLiteral("Export timelines"), QStringLiteral("timeline.json"), QStringLiteral("Chrome trace (*.json)"),
        [this, ids](const QString& path) { exportChromeTrace(ids, with_suffix(path, QStringLiteral("json"))); });
  });
  connect(rename, &QAction::triggered, this, [this] {
    const QStringList ids = selectedTrialIds();
    const TrialRecord* r = ids.isEmpty() ? nullptr : m_trials->find(ids.first());
    if (!r) return;
    auto* d = new QInputDialog(m_parent);
    d->setObjectName(QStringLiteral("renameDialog"));
    d->setWindowTitle(QStringLiteral("Rename trial"));
    d->setLabelText(QStringLiteral("Name (shown in the table, comparisons and reports):"));
    d->setTextValue(QString::fromStdString(r->config.name));
    d->setMinimumWidth(460);  // trial names run long ("7b ddp x2 [bucket_mb=100] #2 (again)")
    d->resize(520, d->sizeHint().height());
    d->setAttribute(Qt::WA_DeleteOnClose);
    const QString id = ids.first();
    connect(d, &QInputDialog::textValueSelected, this, [this, id](const QString& name) {
      if (!m_session->renameTrial(id, name.trimmed()))
        showError(QStringLiteral("Rename trial"), m_session->errorString());
    });
    open_in_front(d);
  });
  connect(del, &QAction::triggered, this, [this] {
    const QStringList ids = selectedTrialIds();
    if (ids.isEmpty()) return;
    auto* box = new QMessageBox(
        QMessageBox::Question, QStringLiteral("Delete trials"),
        QStringLiteral("Delete %1 trial(s) and all their records from the session? This cannot be undone.")
            .arg(ids.size()),
        QMessageBox::Yes | QMessageBox::Cancel, m_parent);
    box->setDefaultButton(QMessageBox::Cancel);
    box->setAttribute(Qt::WA_DeleteOnClose);
    connect(box, &QMessageBox::finished, this, [this, box, ids](int) {
      if (box->clickedButton() != box->button(QMessageBox::Yes)) return;
      for (const QString& id : ids)
        if (!m_session->deleteTrial(id)) showError(QStringLiteral("Delete trial"), m_session->errorString());
    });
    open_in_front(box);
  });
  connect(again, &QAction::triggered, this, [this] {
    const QStringList ids = selectedTrialIds();
    if (!ids.isEmpty()) rerunWithChanges(ids.first());
  });
  connect(annotate, &QAction::triggered, this, [this] {
    const QStringList ids = selectedTrialIds();
    const TrialRecord* r = ids.isEmpty() ? nullptr : m_trials->find(ids.first());
    if (!r) return;
    auto* dialog = new TrialNotesDialog(QString::fromStdString(r->config.name), r->notes, r->tags, m_parent);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    const QString id = ids.first();
    connect(dialog, &QDialog::accepted, this, [this, dialog, id] {
      if (!m_session->annotateTrial(id, dialog->notes(), dialog->tags()))
        showError(QStringLiteral("Annotate trial"), m_session->errorString());
    });
    open_in_front(dialog);
  });
  connect(m_examples, &QAction::triggered, this, [this] { emit startPageRequested(true); });

  m_fileMenu = new QMenu(QStringLiteral("&File"));
  m_fileMenu->setObjectName(QStringLiteral("menuFile"));
  m_recentMenu = new QMenu(QStringLiteral("Open &recent"), m_fileMenu);
  m_recentMenu->setObjectName(QStringLiteral("menuRecent"));
  m_fileMenu->addAction(newAct);
  m_fileMenu->addAction(open);
  m_fileMenu->addMenu(m_recentMenu);
  m_fileMenu->addAction(saveAs);
  m_fileMenu->addAction(import);
  m_fileMenu->addSeparator();
  for (QAction* a : {exportReportAct, exportTrialsAct, exportSummaries, exportTrace}) m_fileMenu->addAction(a);
  rebuildRecentMenu();

  m_contextMenu = new QMenu;
  m_contextMenu->setObjectName(QStringLiteral("trialsContextMenu"));
  for (QAction* a : {again, rename, annotate}) m_contextMenu->addAction(a);
  m_contextMenu->addSeparator();
  for (QAction* a : {exportReportAct, exportTrialsAct, exportSummaries, exportTrace}) m_contextMenu->addAction(a);
  m_contextMenu->addSeparator();
  m_contextMenu->addAction(del);
  connect(m_selection, &QItemSelectionModel::selectionChanged, this, &SessionActions::updateTrialActions);
  connect(this, &QObject::destroyed, m_fileMenu, &QObject::deleteLater);
  connect(this, &QObject::destroyed, m_contextMenu, &QObject::deleteLater);
  updateTrialActions();
}

QList<QAction*> SessionActions::trialActions() const { return m_trialMenuActions; }

void SessionActions::addTrialAction(QAction* action) {
  m_trialMenuActions << action;
  QAction* firstSeparator = nullptr;  // the context menu's trial entries end there
  for (QAction* a : m_contextMenu->actions())
    if (a->isSeparator()) {
      firstSeparator = a;
      break;
    }
  m_contextMenu->insertAction(firstSeparator, action);
}

void SessionActions::openInitialSession(const QString& sessionPath) {
  bool ok = false;
  if (!sessionPath.isEmpty()) {
    ok = QFileInfo::exists(sessionPath) ? openSession(sessionPath) : newSession(sessionPath);
  } else if (m_useSettings) {
    const QString last = QSettings().value(QStringLiteral("session/last")).toString();
    // Ours (we made it): its configs run without a preview. Opening is a background job; a
    // failure reports, and a fresh session is made below only when no file is there at all.
    if (!last.isEmpty() && QFileInfo::exists(last)) ok = m_session->openSession(last, !isOwn(last));
    if (!ok) {
      const QString stamp = QDateTime::currentDateTime().toString(QStringLiteral("yyyyMMdd-HHmmss"));
      ok = newSession(unused_path(user_sessions_dir(), QStringLiteral("session-") + stamp));
    }
  }
  // Tests and --no-restore: a throw-away session, so the window always has one (also while the
  // file above is still being opened in the background).
  if (!m_session->hasSession() && !m_session->newScratchSession()) emit errorLogged(m_session->errorString());
  (void)ok;
}

bool SessionActions::newSession(const QString& path) {
  if (m_busy) {
    showError(QStringLiteral("New session"), QStringLiteral("A trial is running; stop it before switching sessions."));
    return false;
  }
  if (!m_session->newSession(path)) {
    showError(QStringLiteral("New session"), m_session->errorString());
    return false;
  }
  addOwn(path);
  return true;
}

bool SessionActions::openSession(const QString& path) {
  if (m_busy) {
    showError(QStringLiteral("Open session"), QStringLiteral("A trial is running; stop it before switching sessions."));
    return false;
  }
  // A report opens as a new session holding the trials it carries (in the user's sessions folder).
  if (is_html(path)) {
    const QString copy = unused_path(user_sessions_dir(), QFileInfo(path).completeBaseName());
    if (!m_session->openReport(path, copy)) {
      showError(QStringLiteral("Open session"), QStringLiteral("%1 was not opened: %2")
                                                    .arg(QFileInfo(path).fileName(), m_session->errorString()));
      return false;
    }
    emit statusMessage(QStringLiteral("Opening the trials of %1…").arg(path), 4000);
    return true;
  }
  // A file opened from disk may come from anyone: its configs are shown before they run. Not the
  // user's own sessions (made here with New, or saved from one): they stay theirs however opened.
  if (!m_session->openSession(path, !isOwn(path))) {
    showError(QStringLiteral("Open session"),
              QStringLiteral("%1 was not opened: %2\nNothing was changed (the current session stays open).")
                  .arg(QFileInfo(path).fileName(), m_session->errorString()));
    return false;
  }
  emit statusMessage(QStringLiteral("Opening %1…").arg(path), 4000);
  return true;
}

bool SessionActions::openExample(const QString& examplePath) {
  // Examples are opened as a copy: the shipped file may sit in a read-only install folder, and a
  // run or an edit must never change it. The copy is SQLite's (VACUUM INTO), never a byte copy of
  // ours: reading a session with a descriptor of our own would drop this process's locks on it.
  const QString copy = unused_path(user_sessions_dir(), QFileInfo(examplePath).completeBaseName());
  if (!m_session->openCopy(examplePath, copy)) {
    showError(QStringLiteral("Open example"), m_session->errorString());
    return false;
  }
  emit statusMessage(QStringLiteral("Opening a copy of %1…").arg(QFileInfo(examplePath).fileName()), 4000);
  return true;
}

bool SessionActions::saveSessionAs(const QString& path) {
  const bool own = !m_session->isForeign();
  if (!m_session->saveAs(path)) {
    showError(QStringLiteral("Save session as"), m_session->errorString());
    return false;
  }
  if (own) addOwn(path);  // a copy of the user's own session is theirs too
  return true;
}

bool SessionActions::isOwn(const QString& path) const { return m_own.contains(QFileInfo(path).absoluteFilePath()); }

void SessionActions::addOwn(const QString& path) {
  const QString abs = QFileInfo(path).absoluteFilePath();
  if (m_own.contains(abs)) return;
  m_own.prepend(abs);
  while (m_own.size() > 200) m_own.removeLast();  // a long list of files the user made is plenty
  if (m_useSettings) QSettings().setValue(QStringLiteral("session/own"), m_own);
}

bool SessionActions::importFiles(const QStringList& paths) {
  bool ok = true;
  std::vector<QStringList> byImporter(size_t(m_importers.size()));
  for (const QString& path : paths) {
    if (path.endsWith(QStringLiteral(".tbsession"), Qt::CaseInsensitive)) {
      ok = openSession(path) && ok;
      continue;
    }
    bool taken = false;
    for (int i = int(m_importers.size()) - 1; i >= 0 && !taken; --i)  // the most recently added first
      if (m_importers[i].accepts && m_importers[i].accepts(path)) {
        byImporter[size_t(i)] << path;
        taken = true;
      }
    if (!taken) {
      QStringList kinds;
      for (const Importer& i : std::as_const(m_importers)) kinds << i.name;
      const QFileInfo file(path);
      showError(QStringLiteral("Import"),
                !file.isFile() || !file.isReadable()
                    ? QStringLiteral("%1 cannot be read: it is missing, not a file, or not readable by you.")
                          .arg(QDir::toNativeSeparators(path))
                    : QStringLiteral("%1 is none of the kinds of file Tunebench imports (%2).")
                          .arg(file.fileName(), kinds.join(QStringLiteral(", "))));
      ok = false;
    }
  }
  for (size_t i = 0; i < byImporter.size(); ++i)
    if (!byImporter[i].isEmpty()) ok = m_importers[int(i)].import(byImporter[i]) && ok;
  return ok;
}

bool SessionActions::importLog(const QString& jsonlPath) {
  if (!m_session->importLog(jsonlPath)) {
    showError(QStringLiteral("Import event log"),
              QStringLiteral("%1 was not imported: %2").arg(QFileInfo(jsonlPath).fileName(), m_session->errorString()));
    return false;
  }
  emit statusMessage(QStringLiteral("Importing %1…").arg(QFileInfo(jsonlPath).fileName()), 4000);
  return true;
}

bool SessionActions::importReport(const QString& htmlPath) {
  if (!m_session->importReport(htmlPath)) {
    showError(QStringLiteral("Import report"), QStringLiteral("%1 was not imported: there is no session open.")
                                                   .arg(QFileInfo(htmlPath).fileName()));
    return false;
  }
  emit statusMessage(QStringLiteral("Importing the trials of %1…").arg(QFileInfo(htmlPath).fileName()), 4000);
  return true;
}

void SessionActions::askExportReport(const QStringList& recordIds) {
  if (recordIds.isEmpty()) {
    showError(QStringLiteral("Export report"), QStringLiteral("Select the trials to report in the trials table first."));
    return;
  }
  askSavePath(QStringLiteral("Export report"), QStringLiteral("report.html"),
              QStringLiteral("HTML report, carries the trials (*.html);;Markdown summary (*.md)"),
              [this, recordIds](const QString& path) { exportReport(recordIds, path); });
}

bool SessionActions::exportReport(const QStringList& recordIds, const QString& path) {
  rememberExportDir(path);
  const bool markdown = path.endsWith(QStringLiteral(".md"), Qt::CaseInsensitive);
  const QString file = markdown ? path : with_suffix(path, QStringLiteral("html"));
  if (recordIds.isEmpty() ||
      !m_session->exportTrials(recordIds, file,
                               markdown ? report::ReportFormat::Markdown : report::ReportFormat::Html)) {
    showError(QStringLiteral("Export report"),
              recordIds.isEmpty() ? QStringLiteral("Select the trials to report in the trials table first.")
                                  : m_session->errorString());
    return false;
  }
  return true;
}

bool SessionActions::exportTrials(const QStringList& recordIds, const QString& path) {
  rememberExportDir(path);
  const auto format = path.endsWith(QStringLiteral(".json"), Qt::CaseInsensitive)
                          ? store::ExportFormat::Json
                          : store::ExportFormat::StepsCsv;
  if (recordIds.isEmpty() || !m_session->exportTrials(recordIds, path, format)) {
    showError(QStringLiteral("Export trials"),
              recordIds.isEmpty() ? QStringLiteral("Select the trials to export in the trials table first.")
                                  : m_session->errorString());
    return false;
  }
  return true;
}

bool SessionActions::exportSummariesCsv(const QStringList& recordIds, const QString& path) {
  rememberExportDir(path);
  if (recordIds.isEmpty() || !m_session->exportTrials(recordIds, path, store::ExportFormat::SummariesCsv)) {
    showError(QStringLiteral("Export summaries"),
              QStringLiteral("Nothing written to %1: %2").arg(path, m_session->errorString()));
    return false;
  }
  return true;
}

bool SessionActions::exportChromeTrace(const QStringList& recordIds, const QString& path) {
  rememberExportDir(path);
  if (recordIds.isEmpty() || !m_session->exportTrials(recordIds, path, store::ExportFormat::ChromeTrace)) {
    showError(QStringLiteral("Export timelines"), m_session->errorString());
    return false;
  }
  return true;
}

bool SessionActions::rerunWithChanges(const QString& recordId) {
  const TrialRecord* r = m_trials->find(recordId);
  if (!r) return false;
  config::TrialConfig c = r->config;
  c.name = r->config.name + " (again)";
  const qint64 id = m_session->storeId(recordId);
  emit configRequested(c, id >= 0 ? QStringLiteral("duplicate of trial %1").arg(id) : QString());
  emit startPageRequested(false);
  emit statusMessage(QStringLiteral("Loaded %1 into the form: change what you want, then Run")
                         .arg(QString::fromStdString(r->config.name)),
                     8000);
  return true;
}

bool SessionActions::canDrop(const QMimeData* mime) const {
  for (const QString& f : local_files(mime)) {
    if (f.endsWith(QStringLiteral(".tbsession"), Qt::CaseInsensitive)) return true;
    for (const Importer& i : m_importers)
      if (i.accepts && i.accepts(f)) return true;
  }
  return false;
}

bool SessionActions::drop(const QMimeData* mime) { return importFiles(local_files(mime)); }

void SessionActions::acceptDropsOn(QWidget* target) {
  m_dropTarget = target;
  target->setAcceptDrops(true);
  target->installEventFilter(this);
}

bool SessionActions::eventFilter(QObject* watched, QEvent* event) {
  if (watched != m_dropTarget) return QObject::eventFilter(watched, event);
  if (event->type() == QEvent::DragEnter || event->type() == QEvent::DragMove) {
    auto* e = static_cast<QDragMoveEvent*>(event);
    if (event->type() == QEvent::DragEnter) m_dropAccepted = canDrop(e->mimeData());
    if (m_dropAccepted) e->acceptProposedAction();
    return true;
  }
  if (event->type() == QEvent::Drop) {
    auto* e = static_cast<QDropEvent*>(event);
    if (drop(e->mimeData())) e->acceptProposedAction();
    return true;
  }
  return QObject::eventFilter(watched, event);
}

QStringList SessionActions::selectedTrialIds() const {
  QStringList ids;
  QModelIndexList rows = m_selection->selectedRows();
  std::sort(rows.begin(), rows.end(), [](const QModelIndex& a, const QModelIndex& b) { return a.row() < b.row(); });
  for (const QModelIndex& i : rows) ids << i.data(TrialsModel::TrialIdRole).toString();
  return ids;
}

void SessionActions::updateTrialActions() {
  const bool any = m_selection->hasSelection();
  for (QAction* a : std::as_const(m_trialActions)) a->setEnabled(any);
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
  emit recentChanged(m_recent);
}

void SessionActions::rebuildRecentMenu() {
  m_recentMenu->clear();
  for (const QString& p : std::as_const(m_recent))
    m_recentMenu->addAction(QFileInfo(p).fileName(), this, [this, p] { openSession(p); })->setToolTip(p);
  m_recentMenu->setEnabled(!m_recent.isEmpty());
}

void SessionActions::rememberExportDir(const QString& path) {
  m_exportDir = QFileInfo(path).absolutePath();
  if (m_useSettings) QSettings().setValue(QStringLiteral("export/lastDir"), m_exportDir);
}

void SessionActions::showError(const QString& title, const QString& message, const QString& details) {
  m_lastError = message;
  emit errorLogged(details.isEmpty() ? QStringLiteral("%1: %2").arg(title, message)
                                     : QStringLiteral("%1: %2 (%3)").arg(title, message, details));
  if (m_lastBox) m_lastBox->close();
  m_lastBox = new QMessageBox(QMessageBox::Warning, title, message, QMessageBox::Ok, m_parent);
  m_lastBox->setObjectName(QStringLiteral("sessionErrorBox"));
  if (!details.isEmpty()) m_lastBox->setDetailedText(details);
  m_lastBox->setAttribute(Qt::WA_DeleteOnClose);
  open_in_front(m_lastBox);
}

void SessionActions::askSavePath(const QString& title, const QString& fileName, const QString& filter,
                                 std::function<void(const QString&)> chosen) {
  // A proposed name comes from a session's or a trial's name ("tune: mb 2"): no character that some
  // file system or shell takes for something else (a colon, a slash, quotes).
  QString safe = fileName;
  for (QChar& ch : safe)
    if (QStringLiteral("/\\:*?\"<>|").contains(ch) || ch.unicode() < 0x20) ch = QLatin1Char('-');
  auto* d = new QFileDialog(m_parent, title, QDir(m_exportDir).filePath(safe), filter);
  d->setAcceptMode(QFileDialog::AcceptSave);
  d->setAttribute(Qt::WA_DeleteOnClose);
  connect(d, &QFileDialog::fileSelected, this, [chosen = std::move(chosen)](const QString& path) { chosen(path); });
  open_in_front(d);
}

}  // namespace tunebench::ui

#include "ui/windows/main_window.h"

#include <QAction>
#include <QCloseEvent>
#include <QFileInfo>
#include <QLabel>
#include <QMenu>
#include <QProgressBar>
#include <QStackedWidget>
#include <QStatusBar>
#include <QTableView>

#include "ui/models/trials_model.h"
#include "ui/runner/background_jobs.h"
#include "ui/runner/trial_queue.h"
#include "ui/runner/trial_runner.h"
#include "ui/windows/analysis_controller.h"
#include "ui/windows/dock_layout.h"
#include "ui/windows/job_status.h"
#include "ui/windows/link_probe_controller.h"
#include "ui/windows/live_trial_tracker.h"
#include "ui/windows/live_view.h"
#include "ui/windows/log_pane.h"
#include "ui/windows/plot_export.h"
#include "ui/windows/prediction_controller.h"
#include "ui/windows/run_control.h"
#include "ui/windows/run_status.h"
#include "ui/windows/session_actions.h"
#include "ui/windows/session_controller.h"
#include "ui/windows/start_page.h"
#include "ui/windows/trace_import_actions.h"
#include "ui/windows/trial_form.h"
#include "ui/windows/trial_launcher.h"
#include "ui/windows/trial_viewer.h"
#include "ui/windows/trials_panel.h"
#include "ui/windows/window_settings.h"
#include "ui/windows/workbench_actions.h"
#include "ui/windows/workbench_context.h"

// Resources compiled into a static library are not registered on their own.
static void init_tunebench_resources() { Q_INIT_RESOURCE(tunebench); }

namespace tunebench::ui {

MainWindow::MainWindow(const Options& options, QWidget* parent) : QMainWindow(parent), m_options(options) {
  init_tunebench_resources();
  setObjectName(QStringLiteral("mainWindow"));
  setWindowTitle(QStringLiteral("Tunebench"));
  setWindowIcon(QIcon(QStringLiteral(":/tunebench/icons/tunebench.svg")));

  m_devices = options.detectDevices ? detect_devices() : options.devices;
  m_jobs = new BackgroundJobs(this);
  m_live = new LiveView;
  m_live->setMachineHasGpu(m_devices.hasGpu());
  m_startPage = new StartPage;
  m_centre = new QStackedWidget;
  m_centre->setObjectName(QStringLiteral("centreStack"));
  m_centre->addWidget(m_live);
  m_centre->addWidget(m_startPage);
  setCentralWidget(m_centre);
  m_form = new TrialForm;
  m_trials = new TrialsModel(this);
  m_log = new LogPane;
  m_runStatus = new RunStatus;  // placed in the status bar by createStatusBar
  m_queue = new TrialQueue(this);
  m_panel = new TrialsPanel(m_trials);
  m_docks = new DockLayout(this);
  m_docks->addForm(m_form);
  m_docks->addBottom(m_panel, m_log);
  createSession();
  createControllers();
  createActions();
  createStatusBar();

  m_form->setDevices(m_devices);
  // Without a GPU the only trials that can run are CPU ones: start from the tiny CPU preset.
  m_form->applyPreset(m_devices.hasGpu() ? QStringLiteral("7b-single") : QStringLiteral("cpu-tiny"));
  if (options.useSettings) restore_window_settings(*this, *m_form);
  m_sessionActions->acceptDropsOn(this);
  m_sessionActions->openInitialSession(options.sessionPath);
  showStartPage(m_trials->rowCount() == 0);
  resize(1500, 950);
  updateActions();
}

MainWindow::~MainWindow() = default;

void MainWindow::createSession() {
  // Session store first, so a trial is recorded before the window (and trialFinished listeners)
  // see it end.
  m_session = new SessionController(m_trials, m_jobs, this);
  connect(m_queue, &TrialQueue::trialStarting, m_session, &SessionController::beginLiveTrial);
  connect(m_queue->runner(), &LiveSource::eventsArrived, m_session, &SessionController::addEvents);
  connect(m_queue->runner(), &LiveSource::finished, m_session, &SessionController::finishLiveTrial);
  m_tracker = new LiveTrialTracker(m_trials, m_session, m_queue, this);
  connect(m_tracker, &LiveTrialTracker::trialFinished, this, &MainWindow::trialFinished);
  connect(m_queue, &TrialQueue::queueChanged, this, &MainWindow::updateActions);

  m_viewer = new TrialViewer(m_live, m_trials, m_panel->selection(), m_session, &m_tracker->logs(), this);
  connect(m_session, &SessionController::sessionChanged, m_viewer, &TrialViewer::sessionChanged);
  connect(m_panel, &TrialsPanel::trialActivated, m_viewer, &TrialViewer::show);

  m_launcher = new TrialLauncher(m_session, this, this);
  m_launcher->setDevices(m_devices);
  m_launcher->setWorkerProgram(m_options.workerProgram);
  m_launcher->setEnqueue([this](const config::TrialConfig& c, const LaunchRequest& r) {
    const QString id = m_tracker->enqueue(c, r.source, r.linkProbe, m_options.workerProgram);
    updateActions();
    return id;
  });
  connect(m_launcher, &TrialLauncher::refused, this, [this](const QString& message) {
    showStatus(message, 10000);
    m_log->appendError(message);
  });

  m_sessionActions = new SessionActions(m_session, m_trials, m_panel->selection(), this, m_options.useSettings, this);
  connect(m_sessionActions, &SessionActions::statusMessage, this, &MainWindow::showStatus);
  connect(m_sessionActions, &SessionActions::logMessage, m_log, &LogPane::appendNote);
  connect(m_sessionActions, &SessionActions::errorLogged, m_log, &LogPane::appendError);
  connect(m_sessionActions, &SessionActions::startPageRequested, this, &MainWindow::showStartPage);
  connect(m_sessionActions, &SessionActions::sessionSwitched, this, [this] {
    // Nothing said about the previous session stays: its log and its last run's status.
    m_log->restart(QStringLiteral("Session %1").arg(QFileInfo(m_session->path()).fileName()));
    if (!isBusy()) m_runStatus->clear();
  });
  connect(m_sessionActions, &SessionActions::recentChanged, m_startPage, &StartPage::setRecent);
  connect(m_sessionActions, &SessionActions::configRequested, this,
          [this](const config::TrialConfig& c, const QString& source) {
            m_form->setConfig(c, TrialForm::Origin{!source.isEmpty(), source});
          });
  // Run, Queue, Stop, cancel and replay, and what the live sources say (before the controllers
  // connect to the runner).
  m_run = new RunControl(
      {m_form, m_launcher, m_queue, m_tracker, m_viewer, m_panel, m_live, m_runStatus, m_sessionActions, m_log}, this);
  connect(m_run, &RunControl::statusMessage, this, &MainWindow::showStatus);
  connect(m_run, &RunControl::statusCleared, this, [this] { statusBar()->clearMessage(); });
  connect(m_run, &RunControl::liveShown, this, [this] { showStartPage(false); });
  connect(m_run, &RunControl::busyChanged, this, &MainWindow::updateActions);
  // torch.profiler traces: an importer of SessionActions, and Trial > Settings….
  m_traceImport = new TraceImportActions(m_session, m_sessionActions, m_panel->selection(), this, this);
  connect(m_traceImport, &TraceImportActions::statusMessage, this, &MainWindow::showStatus);
  connect(m_traceImport, &TraceImportActions::logMessage, m_log, &LogPane::appendNote);
  connect(m_traceImport, &TraceImportActions::traceImported, this, &MainWindow::showImported);
  connect(m_session, &SessionController::imported, this,
          [this](const QString&, const store::ImportResult&, const QString& id) { showImported(id); });
  connect(m_traceImport, &TraceImportActions::settingsSaved, this, [this](const QString& id) {
    if (m_viewer->shown() == id && !m_viewer->isShowingLive()) m_viewer->reload();  // throughput may now be known
  });
  m_startPage->listExamples(m_jobs);
  m_startPage->setRecent(m_sessionActions->recentSessions());
  connect(m_startPage, &StartPage::exampleActivated, m_sessionActions, &SessionActions::openExample);
  connect(m_startPage, &StartPage::recentActivated, m_sessionActions, &SessionActions::openSession);
  connect(m_startPage, &StartPage::newTrialRequested, this, [this] {
    showStartPage(false);
    m_form->setFocus();
  });
  connect(m_session, &SessionController::trialCountChanged, this, [this](int count) {
    if (!isBusy()) showStartPage(count == 0);
  });
  connect(m_session, &SessionController::sessionChanged, this, [this] {
    const QString path = m_session->path();
    setWindowTitle(
        path.isEmpty()
            ? QStringLiteral("Tunebench")
            : QStringLiteral("%1 — %2 — Tunebench").arg(m_session->sessionName(), QFileInfo(path).fileName()));
    setWindowFilePath(path);
    if (!m_session->isScratch())  // a throw-away session (tests, --no-restore) is not news
      showStatus(QStringLiteral("%1: %2 trial(s)").arg(QFileInfo(path).fileName()).arg(m_trials->rowCount()), 6000);
  });
}

void MainWindow::createControllers() {
  WorkbenchContext context;
  context.dialogParent = this;
  context.form = m_form;
  context.trials = m_trials;
  context.selection = m_panel->selection();
  context.session = m_session;
  context.launcher = m_launcher;
  context.live = m_tracker;
  context.queue = m_queue;
  context.useSettings = m_options.useSettings;
  m_analysis = new AnalysisController(context, this);
  m_prediction = new PredictionController(context, m_analysis, this);
  m_sessionActions->addTrialAction(m_prediction->useForPredictionsAction());  // Trial menu and context menu
  m_linkProbe = new LinkProbeController(context, this);
  m_prediction->panel()->setMeasureLinkAction(m_linkProbe->action());
  m_docks->addBelowForm(QStringLiteral("Prediction"), QStringLiteral("predictionDock"), m_prediction->panel());
  connect(m_analysis, &AnalysisController::statusMessage, this, &MainWindow::showStatus);
  connect(m_analysis, &AnalysisController::exportReportRequested, this,
          [this](const QStringList& ids) { m_sessionActions->askExportReport(ids); });
  connect(m_prediction, &PredictionController::statusMessage, this, &MainWindow::showStatus);
}

void MainWindow::createActions() {
  m_actions = new WorkbenchActions(this);
  connect(m_actions->run(), &QAction::triggered, this, &MainWindow::runTrial);
  connect(m_actions->queue(), &QAction::triggered, this, &MainWindow::runTrial);  // the queue starts it when idle
  connect(m_actions->stop(), &QAction::triggered, this, &MainWindow::stopTrial);
  connect(m_actions->stopAll(), &QAction::triggered, m_tracker, &LiveTrialTracker::stopAll);
  connect(m_actions->validate(), &QAction::triggered, this, [this] {
    const int n = m_form->validateAndShow();
    showStatus(n ? QStringLiteral("%1 problem(s) in the form").arg(n) : QStringLiteral("The trial is valid"), 4000);
  });
  connect(m_actions, &WorkbenchActions::replayChosen, this, [this](const QString& path) { replayLog(path, 1.0); });
  connect(m_actions, &WorkbenchActions::exportChosen, this, [this](const QString& path) {
    const QStringList written = exportPlots(path);
    showStatus(written.isEmpty() ? QStringLiteral("Could not write %1").arg(path)
                                 : QStringLiteral("Wrote %1").arg(written.join(QStringLiteral(", "))),
               8000);
  });
  connect(m_actions->quit(), &QAction::triggered, this, &QWidget::close);

  QMenu* context = m_sessionActions->contextMenu();  // a stored trial's entries, then Investigate
  context->addSeparator();
  context->addAction(m_analysis->investigateAction());
  m_panel->setContextMenu(context, m_sessionActions->trialActions());

  WorkbenchActions::Parts parts;
  parts.file = m_sessionActions->fileMenu();
  parts.trialEntries = m_sessionActions->trialActions();
  parts.measureLink = m_linkProbe->action();
  parts.viewEntries = m_live->timelineActions();
  parts.dockToggles = m_docks->toggleActions();
  parts.analysis = m_analysis->menu();
  parts.analysis->addAction(m_prediction->whatIfAction());
  parts.examples = m_sessionActions->examplesAction();
  parts.exportDir = [this] { return m_sessionActions->exportDir(); };
  m_actions->buildMenus(parts);
}

void MainWindow::createStatusBar() {
  m_jobStatus = new JobStatus(m_jobs);
  auto* devices = new QLabel(m_devices.hasGpu() ? QStringLiteral("%1 GPU(s)").arg(m_devices.gpus.size())
                                                : QStringLiteral("CPU only"));
  devices->setToolTip(m_devices.summary());
  // Permanent, right of the messages: the run's line is never drawn over one.
  statusBar()->addPermanentWidget(m_runStatus);
  statusBar()->addPermanentWidget(m_jobStatus);
  statusBar()->addPermanentWidget(m_runStatus->bar());
  statusBar()->addPermanentWidget(devices);
}

QTableView* MainWindow::trialsView() const { return m_panel->table(); }

TrialGroupsView* MainWindow::groupsView() const { return m_panel->groupsView(); }

QAction* MainWindow::action(const QString& objectName) const { return findChild<QAction*>(objectName); }

QMenu* MainWindow::menu(const QString& objectName) const { return findChild<QMenu*>(objectName); }

bool MainWindow::isBusy() const { return m_tracker->isBusy(); }

bool MainWindow::isStartPageShown() const { return m_centre->currentWidget() == m_startPage; }

void MainWindow::showStartPage(bool show) {
  if (show) m_startPage->setRecent(m_sessionActions ? m_sessionActions->recentSessions() : QStringList());
  m_centre->setCurrentWidget(show ? static_cast<QWidget*>(m_startPage) : static_cast<QWidget*>(m_live));
}

void MainWindow::showStatus(const QString& text, int timeoutMs) { statusBar()->showMessage(text, timeoutMs); }

void MainWindow::selectRows(const QStringList& rows) {
  const QString last = m_panel->selectRows(rows);
  if (last.isEmpty()) return;
  m_viewer->show(last);
  showStartPage(false);
}

bool MainWindow::runTrial() { return m_run->runTrial(); }

QString MainWindow::queueConfig(const config::TrialConfig& config) { return m_run->queueConfig(config); }

void MainWindow::stopTrial() { m_run->stopTrial(); }

bool MainWindow::cancelTrial(const QString& id) { return m_run->cancelTrial(id); }

bool MainWindow::replayLog(const QString& path, double speed) { return m_run->replayLog(path, speed); }

void MainWindow::showImported(const QString& recordId) {
  if (!isBusy() && m_panel->makeCurrent(recordId)) showStartPage(false);
}

void MainWindow::updateActions() {
  if (m_actions) m_actions->setBusy(isBusy());
}

QStringList MainWindow::exportPlots(const QString& path) { return save_live_plots(m_live, path); }

void MainWindow::closeEvent(QCloseEvent* event) {
  // Closing the window must not leave ranks training in the background.
  m_queue->clearPending();
  if (m_queue->runner()->isActive()) m_queue->runner()->stopAndWait();
  m_run->stopReplay();
  if (m_options.useSettings) {
    m_docks->keepShares();
    save_window_settings(*this, *m_form);
  }
  event->accept();
}

}  // namespace tunebench::ui

#include "ui/windows/main_window.h"

#include <algorithm>

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QComboBox>
#include <QDateTime>
#include <QDir>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QInputDialog>
#include <QItemSelectionModel>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QProgressBar>
#include <QScrollArea>
#include <QSettings>
#include <QStackedWidget>
#include <QStatusBar>
#include <QTableView>
#include <QTimer>
#include <QToolBar>
#include <QVBoxLayout>

#include "core/launch/link_probe.h"
#include "ui/models/trials_model.h"
#include "ui/plots/step_time_plot.h"
#include "ui/plots/telemetry_plot.h"
#include "ui/plots/timeline_plot.h"
#include "ui/runner/background_jobs.h"
#include "ui/runner/replay_source.h"
#include "ui/runner/trial_queue.h"
#include "ui/runner/trial_runner.h"
#include "ui/windows/analysis_controller.h"
#include "ui/windows/dialog_front.h"
#include "ui/windows/link_probe_controller.h"
#include "ui/windows/live_view.h"
#include "ui/windows/prediction_controller.h"
#include "ui/windows/log_pane.h"
#include "ui/windows/plot_export.h"
#include "ui/windows/session_actions.h"
#include "ui/windows/session_controller.h"
#include "ui/windows/start_page.h"
#include "ui/windows/theme.h"
#include "ui/windows/trace_import_actions.h"
#include "ui/windows/trial_form.h"
#include "ui/windows/trial_groups_view.h"
#include "ui/windows/trial_launcher.h"
#include "ui/windows/trial_viewer.h"

// Resources compiled into a static library are not registered on their own.
static void init_tunebench_resources() { Q_INIT_RESOURCE(tunebench); }

namespace tunebench::ui {

namespace {
constexpr double kBottomDockShare = 0.22;  // of the window's height, the trials and log docks
constexpr int kFormDockWidth = 380;
}  // namespace

MainWindow::MainWindow(const Options& options, QWidget* parent) : QMainWindow(parent), m_options(options) {
  init_tunebench_resources();
  setObjectName(QStringLiteral("mainWindow"));
  setWindowTitle(QStringLiteral("Tunebench"));
  setWindowIcon(QIcon(QStringLiteral(":/tunebench/icons/tunebench.svg")));
  setDockNestingEnabled(true);

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
  m_queue = new TrialQueue(this);
  // Session store first, so a trial is recorded before the window (and trialFinished listeners)
  // see it end.
  m_session = new SessionController(m_trials, m_jobs, this);
  connect(m_queue, &TrialQueue::trialStarting, m_session, &SessionController::beginLiveTrial);
  connect(m_queue->runner(), &LiveSource::eventsArrived, m_session, &SessionController::addEvents);
  connect(m_queue->runner(), &LiveSource::finished, m_session, &SessionController::finishLiveTrial);
  connect(m_session, &SessionController::liveTrialStored, this, [this](const TrialOutcome& outcome) {
    // In the file now: the cache need not keep it (comparisons load it from the file).
    if (m_session->storeId(outcome.trial_id) >= 0) m_logs.remove(outcome.trial_id);
    emit trialFinished(outcome);
  });
  connectSource(m_queue->runner(), true);
  connect(m_queue, &TrialQueue::trialStarting, this, &MainWindow::onTrialStarting);
  connect(m_queue, &TrialQueue::queueChanged, this, &MainWindow::updateActions);

  createDocks();
  m_viewer = new TrialViewer(m_live, m_trials, m_table->selectionModel(), m_session, &m_logs, this);
  connect(m_session, &SessionController::sessionChanged, m_viewer, &TrialViewer::sessionChanged);

  m_launcher = new TrialLauncher(m_session, this, this);
  m_launcher->setDevices(m_devices);
  m_launcher->setWorkerProgram(options.workerProgram);
  m_launcher->setEnqueue([this](const config::TrialConfig& c, const LaunchRequest& r) {
    return enqueueTrial(c, r.source, r.linkProbe);
  });
  connect(m_launcher, &TrialLauncher::refused, this, [this](const QString& message) {
    statusBar()->showMessage(message, 10000);
    m_log->appendError(message);
  });

  m_sessionActions =
      new SessionActions(m_session, m_trials, m_table->selectionModel(), this, options.useSettings, this);
  connect(m_sessionActions, &SessionActions::statusMessage, this,
          [this](const QString& t, int ms) { statusBar()->showMessage(t, ms); });
  connect(m_sessionActions, &SessionActions::logMessage, this, [this](const QString& t) {
    m_log->appendLine({-1, LogLine::Source::Runner, t});
  });
  connect(m_sessionActions, &SessionActions::errorLogged, m_log, &LogPane::appendError);
  connect(m_sessionActions, &SessionActions::startPageRequested, this, &MainWindow::showStartPage);
  connect(m_sessionActions, &SessionActions::sessionSwitched, this, [this] {
    // Nothing said about the previous session stays: its log and its last run's status.
    m_log->restart(QStringLiteral("Session %1").arg(QFileInfo(m_session->path()).fileName()));
    if (!isBusy()) setRunStatus(QString());
  });
  connect(m_sessionActions, &SessionActions::recentChanged, m_startPage, &StartPage::setRecent);
  connect(m_sessionActions, &SessionActions::configRequested, this,
          [this](const config::TrialConfig& c, const QString& source) {
            m_form->setConfig(c, TrialForm::Origin{!source.isEmpty(), source});
          });
  // torch.profiler traces: an importer of SessionActions, and Trial > Settings….
  m_traceImport = new TraceImportActions(m_session, m_sessionActions, m_table->selectionModel(), this, this);
  connect(m_traceImport, &TraceImportActions::statusMessage, this,
          [this](const QString& t, int ms) { statusBar()->showMessage(t, ms); });
  connect(m_traceImport, &TraceImportActions::logMessage, this, [this](const QString& t) {
    m_log->appendLine({-1, LogLine::Source::Runner, t});
  });
  connect(m_traceImport, &TraceImportActions::traceImported, this, &MainWindow::showImported);
  connect(m_session, &SessionController::imported, this,
          [this](const QString&, const store::ImportResult&, const QString& id) { showImported(id); });
  connect(m_traceImport, &TraceImportActions::settingsSaved, this, [this](const QString& id) {
    if (m_viewer->shown() == id && !m_viewer->isShowingLive()) m_viewer->reload();  // throughput may now be known
  });
  m_startPage->setExamples(list_examples(examples_dir(QCoreApplication::applicationDirPath())));
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
      statusBar()->showMessage(
          QStringLiteral("%1: %2 trial(s)").arg(QFileInfo(path).fileName()).arg(m_trials->rowCount()), 6000);
  });

  createActions();
  m_analysis = new AnalysisController(this);
  // The Prediction dock and Analysis > What if…: after the Analysis menu exists.
  m_prediction = new PredictionController(this);
  m_linkProbe = new LinkProbeController(this);  // Trial > Measure the link… (issue 11 item 2)
  createStatusBar();

  m_form->setDevices(m_devices);
  // Without a GPU the only trials that can run are CPU ones: start from the tiny CPU preset.
  m_form->applyPreset(m_devices.hasGpu() ? QStringLiteral("7b-single") : QStringLiteral("cpu-tiny"));
  if (options.useSettings) loadSettings();
  installEventFilter(this);
  setAcceptDrops(true);
  m_sessionActions->openInitialSession(options.sessionPath);
  showStartPage(m_trials->rowCount() == 0);
  resize(1500, 950);
  updateActions();
}

MainWindow::~MainWindow() = default;

void MainWindow::createDocks() {
  auto* formScroll = new QScrollArea;
  formScroll->setWidget(m_form);
  formScroll->setWidgetResizable(true);
  formScroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  auto* formDock = new QDockWidget(QStringLiteral("Trial"), this);
  formDock->setObjectName(QStringLiteral("trialDock"));
  formDock->setWidget(formScroll);
  formDock->setMinimumWidth(340);
  addDockWidget(Qt::LeftDockWidgetArea, formDock);

  m_table = new QTableView;
  m_table->setObjectName(QStringLiteral("trialsTable"));
  m_table->setModel(m_trials);
  m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
  m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  m_table->horizontalHeader()->setSectionResizeMode(TrialsModel::Name, QHeaderView::Interactive);
  m_table->horizontalHeader()->setStretchLastSection(true);  // the reason gets the rest
  // ResizeToContents fits the columns when the model is reset, not when a row arrives (an import,
  // a queued trial) or its values grow: refit them then, at most every 100 ms during a run, and
  // when the table is resized.
  m_refitTable = new QTimer(this);
  m_refitTable->setSingleShot(true);
  m_refitTable->setInterval(100);
  connect(m_refitTable, &QTimer::timeout, this, &MainWindow::fitTrialsTable);
  auto refitSoon = [this] {
    if (!m_refitTable->isActive()) m_refitTable->start();
  };
  connect(m_trials, &QAbstractItemModel::rowsInserted, m_refitTable, refitSoon);
  connect(m_trials, &QAbstractItemModel::dataChanged, m_refitTable, refitSoon);
  connect(m_trials, &QAbstractItemModel::modelReset, m_refitTable, refitSoon);
  m_table->viewport()->installEventFilter(this);
  m_table->verticalHeader()->setVisible(false);
  m_table->setAlternatingRowColors(true);
  m_table->setWordWrap(false);
  m_table->setToolTip(
      QStringLiteral("Click a trial to see its timeline and plots; select several to compare them (Ctrl+K)"));
  // Clicking the row that is already current shows it again (e.g. back from a stored trial).
  connect(m_table, &QTableView::clicked, this,
          [this](const QModelIndex& i) { m_viewer->show(i.data(TrialsModel::TrialIdRole).toString()); });

  // Group by a knob (W&B's run grouping): the same trials as a tree, selection shared.
  m_groups = new TrialGroupsView(m_trials, m_table->selectionModel());
  auto* groupBy = new QComboBox;
  groupBy->setObjectName(QStringLiteral("groupBy"));
  groupBy->addItem(QStringLiteral("no grouping"), QString());
  for (const config::KnobInfo& k : config::knobs())
    if (k.key != "name" && k.type != config::KnobType::Map)
      groupBy->addItem(QString::fromStdString(k.label), QString::fromStdString(k.key));
  groupBy->setToolTip(
      QStringLiteral("Group the trials by a knob: one group per value, with the group's best and median figures"));
  auto* stack = new QStackedWidget;
  stack->addWidget(m_table);
  stack->addWidget(m_groups);
  connect(groupBy, &QComboBox::currentIndexChanged, this, [this, groupBy, stack](int) {
    const QString key = groupBy->currentData().toString();
    m_groups->setGroupKey(key);
    stack->setCurrentIndex(key.isEmpty() ? 0 : 1);
  });
  connect(m_groups, &TrialGroupsView::trialActivated, this, [this](const QString& id) { m_viewer->show(id); });
  auto* tablePanel = new QWidget;
  auto* panelLayout = new QVBoxLayout(tablePanel);
  panelLayout->setContentsMargins(0, 0, 0, 0);
  panelLayout->setSpacing(2);
  auto* bar = new QHBoxLayout;
  bar->addWidget(new QLabel(QStringLiteral("Group by:")));
  bar->addWidget(groupBy);
  bar->addStretch(1);
  panelLayout->addLayout(bar);
  panelLayout->addWidget(stack, 1);

  auto* tableDock = new QDockWidget(QStringLiteral("Trials"), this);
  tableDock->setObjectName(QStringLiteral("trialsDock"));
  tableDock->setWidget(tablePanel);
  addDockWidget(Qt::BottomDockWidgetArea, tableDock);

  auto* logDock = new QDockWidget(QStringLiteral("Log"), this);
  logDock->setObjectName(QStringLiteral("logDock"));
  logDock->setWidget(m_log);
  addDockWidget(Qt::BottomDockWidgetArea, logDock);
  splitDockWidget(tableDock, logDock, Qt::Horizontal);
  resizeDocks({tableDock}, {230}, Qt::Vertical);
  resizeDocks({tableDock, logDock}, {2, 1}, Qt::Horizontal);  // the table's columns and reasons need the room
  resizeDocks({formDock}, {kFormDockWidth}, Qt::Horizontal);
}

void MainWindow::createActions() {
  auto make = [this](const QString& name, const QString& text, const QKeySequence& key, const QString& tip) {
    auto* a = new QAction(text, this);
    a->setObjectName(name);
    a->setShortcut(key);
    a->setToolTip(QStringLiteral("%1 (%2)").arg(tip, key.toString(QKeySequence::NativeText)));
    a->setStatusTip(tip);
    return a;
  };
  QAction* run = make("actionRun", QStringLiteral("&Run"), QKeySequence(Qt::CTRL | Qt::Key_R),
                      QStringLiteral("Validate the form and run the trial"));
  QAction* queueAct = make("actionQueue", QStringLiteral("&Queue"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_R),
                           QStringLiteral("Add the trial to the queue; it runs after the current one"));
  QAction* stop = make("actionStop", QStringLiteral("&Stop"), QKeySequence(Qt::CTRL | Qt::Key_Period),
                       QStringLiteral("Stop the running trial (all ranks)"));
  QAction* stopAll = make("actionStopAll", QStringLiteral("Stop and clear &queue"),
                          QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_Period),
                          QStringLiteral("Stop the running trial and drop the queued ones"));
  QAction* validate = make("actionValidate", QStringLiteral("&Validate"), QKeySequence(Qt::CTRL | Qt::Key_Return),
                           QStringLiteral("Check the form without running"));
  QAction* replay = make("actionReplay", QStringLiteral("&Replay event log…"), QKeySequence(Qt::CTRL | Qt::Key_O),
                         QStringLiteral("Play a recorded .jsonl event log into the live views"));
  QAction* exportAct = make("actionExport", QStringLiteral("&Export plots…"), QKeySequence(Qt::CTRL | Qt::Key_E),
                            QStringLiteral("Save the timeline, step-time and telemetry plots as PNG, PDF or SVG"));
  QAction* quit = make("actionQuit", QStringLiteral("&Quit"), QKeySequence(QKeySequence::Quit),
                       QStringLiteral("Stop everything and quit"));

  connect(run, &QAction::triggered, this, &MainWindow::runTrial);
  connect(queueAct, &QAction::triggered, this, &MainWindow::runTrial);  // the queue starts it when idle
  connect(stop, &QAction::triggered, this, &MainWindow::stopTrial);
  connect(stopAll, &QAction::triggered, this, [this] {
    for (const TrialRequest& pending : m_queue->pending()) markRemovedFromQueue(pending.id);
    m_queue->stopAll();
    if (m_replay) m_replay->stop();
  });
  connect(validate, &QAction::triggered, this, [this] {
    const int n = m_form->validateAndShow();
    statusBar()->showMessage(
        n ? QStringLiteral("%1 problem(s) in the form").arg(n) : QStringLiteral("The trial is valid"), 4000);
  });
  connect(replay, &QAction::triggered, this, [this] {
    auto* d = new QFileDialog(this, QStringLiteral("Replay event log"), {},
                              QStringLiteral("Event logs (*.jsonl);;All files (*)"));
    d->setFileMode(QFileDialog::ExistingFile);
    d->setAttribute(Qt::WA_DeleteOnClose);
    connect(d, &QFileDialog::fileSelected, this, [this](const QString& path) { replayLog(path, 1.0); });
    open_in_front(d);
  });
  connect(exportAct, &QAction::triggered, this, [this] {
    auto* d = new QFileDialog(this, QStringLiteral("Export plots"),
                              QDir(m_sessionActions->exportDir()).filePath(QStringLiteral("timeline.png")),
                              QStringLiteral("PNG image (*.png);;PDF document (*.pdf);;SVG drawing (*.svg)"));
    d->setAcceptMode(QFileDialog::AcceptSave);
    d->setAttribute(Qt::WA_DeleteOnClose);
    connect(d, &QFileDialog::fileSelected, this, [this](const QString& path) {
      const QStringList written = exportPlots(path);
      statusBar()->showMessage(written.isEmpty() ? QStringLiteral("Could not write %1").arg(path)
                                                 : QStringLiteral("Wrote %1").arg(written.join(QStringLiteral(", "))),
                               8000);
    });
    open_in_front(d);
  });
  connect(quit, &QAction::triggered, this, &QWidget::close);

  QMenu* file = m_sessionActions->fileMenu();
  file->setParent(this, file->windowFlags());
  menuBar()->addMenu(file);
  file->addSeparator();
  file->addAction(replay);
  file->addAction(exportAct);
  file->addSeparator();
  file->addAction(quit);
  QMenu* trial = menuBar()->addMenu(QStringLiteral("&Trial"));
  trial->setObjectName(QStringLiteral("menuTrial"));
  for (QAction* a : {run, queueAct, stop, stopAll, validate}) trial->addAction(a);
  trial->addSeparator();
  for (QAction* a : m_sessionActions->trialActions()) trial->addAction(a);
  trial->addAction(m_traceImport->settingsAction());
  QAction* firstSeparator = nullptr;  // the context menu's trial entries end there
  for (QAction* a : m_sessionActions->contextMenu()->actions())
    if (a->isSeparator()) {
      firstSeparator = a;
      break;
    }
  m_sessionActions->contextMenu()->insertAction(firstSeparator, m_traceImport->settingsAction());
  m_table->addActions(m_sessionActions->trialActions());  // F2 and Del work in the table
  m_table->setContextMenuPolicy(Qt::CustomContextMenu);
  connect(m_table, &QWidget::customContextMenuRequested, this,
          [this](const QPoint& pos) { m_sessionActions->contextMenu()->popup(m_table->viewport()->mapToGlobal(pos)); });

  QMenu* view = menuBar()->addMenu(QStringLiteral("&View"));
  view->setObjectName(QStringLiteral("menuView"));
  for (QAction* a : m_live->timelineActions()) view->addAction(a);
  addActions(m_live->timelineActions());  // shortcuts work wherever the focus is
  view->addSeparator();
  QMenu* themes = view->addMenu(QStringLiteral("&Theme"));
  themes->setObjectName(QStringLiteral("menuTheme"));
  for (QAction* a : theme_actions(this)) themes->addAction(a);
  view->addSeparator();
  for (QDockWidget* dock : findChildren<QDockWidget*>()) view->addAction(dock->toggleViewAction());
  QMenu* help = menuBar()->addMenu(QStringLiteral("&Help"));
  help->setObjectName(QStringLiteral("menuHelp"));
  help->addAction(m_sessionActions->examplesAction());
  help->addAction(QStringLiteral("&About Tunebench"), this, [this] {
    // Not QMessageBox::about: that one blocks the application until answered.
    auto* box = new QMessageBox(QMessageBox::Information, QStringLiteral("About Tunebench"),
                                QStringLiteral("<b>Tunebench</b> runs short, instrumented training trials and shows "
                                               "where every millisecond of a step goes."),
                                QMessageBox::Ok, this);
    box->setAttribute(Qt::WA_DeleteOnClose);
    open_in_front(box);
  });

  QToolBar* bar = addToolBar(QStringLiteral("Trial"));
  bar->setObjectName(QStringLiteral("trialToolBar"));
  bar->setToolButtonStyle(Qt::ToolButtonTextOnly);
  for (QAction* a : {run, queueAct, stop}) bar->addAction(a);
  bar->addSeparator();
  bar->addAction(replay);
}

void MainWindow::createStatusBar() {
  // The run's status: a permanent widget (right of the messages), empty and hidden while nothing
  // runs, so it is never drawn over a message ("idle" was, at start).
  m_statusProgress = new QLabel;
  m_statusProgress->setObjectName(QStringLiteral("runStatus"));
  m_statusProgress->setVisible(false);
  m_progressBar = new QProgressBar;
  m_progressBar->setMaximumWidth(180);
  m_progressBar->setVisible(false);
  // Background jobs (opening, loading, importing, exporting) show here, like hotspot's parser.
  m_jobLabel = new QLabel;
  m_jobLabel->setObjectName(QStringLiteral("jobLabel"));
  m_jobBar = new QProgressBar;
  m_jobBar->setObjectName(QStringLiteral("jobProgress"));
  m_jobBar->setMaximumWidth(140);
  m_jobLabel->setVisible(false);
  m_jobBar->setVisible(false);
  m_statusDevices = new QLabel(m_devices.hasGpu() ? QStringLiteral("%1 GPU(s)").arg(m_devices.gpus.size())
                                                  : QStringLiteral("CPU only"));
  m_statusDevices->setToolTip(m_devices.summary());
  statusBar()->addPermanentWidget(m_statusProgress);
  statusBar()->addPermanentWidget(m_jobLabel);
  statusBar()->addPermanentWidget(m_jobBar);
  statusBar()->addPermanentWidget(m_progressBar);
  statusBar()->addPermanentWidget(m_statusDevices);
  connect(m_jobs, &BackgroundJobs::jobStarted, this, [this](int, const QString& title) {
    m_jobLabel->setText(title + QStringLiteral("…"));
    m_jobBar->setRange(0, 0);  // busy until the job says how far it is
    m_jobLabel->setVisible(true);
    m_jobBar->setVisible(true);
  });
  connect(m_jobs, &BackgroundJobs::progress, this,
          [this](int, const QString& title, qint64 done, qint64 total, const QString& text) {
            m_jobLabel->setText(QStringLiteral("%1: %2").arg(title, text));
            if (total > 0) {
              m_jobBar->setRange(0, int(std::min<qint64>(total, 1 << 30)));
              m_jobBar->setValue(int(std::min<qint64>(done, 1 << 30)));
            } else {
              m_jobBar->setRange(0, 0);
            }
          });
  connect(m_jobs, &BackgroundJobs::idle, this, [this] {
    m_jobLabel->setVisible(false);
    m_jobBar->setVisible(false);
  });
}

QAction* MainWindow::action(const QString& objectName) const { return findChild<QAction*>(objectName); }

QMenu* MainWindow::menu(const QString& objectName) const { return findChild<QMenu*>(objectName); }

bool MainWindow::isBusy() const { return m_queue->runner()->isActive() || (m_replay && m_replay->isActive()); }

bool MainWindow::isStartPageShown() const { return m_centre->currentWidget() == m_startPage; }

void MainWindow::showStartPage(bool show) {
  if (show) m_startPage->setRecent(m_sessionActions ? m_sessionActions->recentSessions() : QStringList());
  m_centre->setCurrentWidget(show ? static_cast<QWidget*>(m_startPage) : static_cast<QWidget*>(m_live));
}

void MainWindow::selectRows(const QStringList& rows) {
  QItemSelection selection;
  int last = -1;
  for (const QString& r : rows) {
    bool ok = false;
    const int row = r.trimmed().toInt(&ok);
    if (!ok || row < 0 || row >= m_trials->rowCount()) continue;
    selection.select(m_trials->index(row, 0), m_trials->index(row, TrialsModel::ColumnCount - 1));
    last = row;
  }
  if (last < 0) return;
  m_table->selectionModel()->setCurrentIndex(m_trials->index(last, 0), QItemSelectionModel::NoUpdate);
  m_table->selectionModel()->select(selection, QItemSelectionModel::ClearAndSelect);
  m_viewer->show(m_trials->record(last).id);
  showStartPage(false);
}

void MainWindow::connectSource(LiveSource* source, bool recorded) {
  connect(source, &LiveSource::started, this, &MainWindow::updateActions);
  connect(source, &LiveSource::eventsArrived, this, &MainWindow::onEvents);
  connect(source, &LiveSource::progress, this, &MainWindow::onProgress);
  connect(source, &LiveSource::logLine, m_log, &LogPane::appendLine);
  connect(source, &LiveSource::finished, this,
          [this, recorded](const TrialOutcome& outcome) { onFinished(outcome, recorded); });
}

bool MainWindow::runTrial() {
  if (const int n = m_form->validateAndShow()) {
    statusBar()->showMessage(QStringLiteral("Not started: %1 problem(s) in the form, shown next to the fields").arg(n),
                             6000);
    return false;
  }
  if (m_replay && m_replay->isActive()) {
    statusBar()->showMessage(QStringLiteral("Stop the replay first (Ctrl+.)"), 6000);
    return false;
  }
  LaunchRequest request;
  request.configs = {m_form->config()};
  request.what = QStringLiteral("Run");
  request.fromSession = m_form->origin().fromSession;
  if (!m_form->origin().source.isEmpty()) request.source = m_form->origin().source;
  // Once the user has seen and accepted a stored config, the form's copy is theirs: asked once.
  const auto result = m_launcher->launch(request, [this](const QStringList& ids) {
    if (!ids.isEmpty() && m_form->origin().fromSession) m_form->setConfig(m_form->config());
  });
  return result == TrialLauncher::Result::Queued;
}

QString MainWindow::queueConfig(const config::TrialConfig& config) {
  LaunchRequest request;
  request.configs = {config};
  request.what = QStringLiteral("queue %1").arg(QString::fromStdString(config.name));
  auto id = std::make_shared<QString>();
  m_launcher->launch(request, [id](const QStringList& ids) { *id = ids.value(0); });
  return *id;
}

QString MainWindow::enqueueTrial(const config::TrialConfig& config, const QString& source,
                                 const std::optional<launch::LinkProbeRange>& linkProbe) {
  TrialRequest request;
  request.id = QStringLiteral("t%1-%2")
                   .arg(QDateTime::currentDateTime().toString(QStringLiteral("yyyyMMdd-HHmmss")))
                   .arg(++m_counter);
  request.config = config;
  if (request.config.name.empty()) request.config.name = request.id.toStdString();
  request.worker_program = m_options.workerProgram;
  request.link_probe = linkProbe;
  TrialRecord record;
  record.id = request.id;
  record.config = request.config;
  record.steps = linkProbe ? launch::link_probe_points(*linkProbe) : int(request.config.steps);
  record.source = source;
  m_trials->upsert(record);
  m_session->addQueuedTrial(record, source);
  m_queue->enqueue(request);
  updateActions();
  return request.id;
}

void MainWindow::stopTrial() {
  if (m_replay && m_replay->isActive()) m_replay->stop();
  if (m_queue->runner()->isActive()) {
    m_queue->runner()->stop();
    statusBar()->showMessage(QStringLiteral("Stopping every rank…"), 3000);
  }
}

bool MainWindow::cancelTrial(const QString& id) {
  if (m_queue->runner()->isActive() && m_queue->runner()->trialId() == id) {
    stopTrial();
    return true;
  }
  if (!m_queue->remove(id)) return false;
  markRemovedFromQueue(id);
  updateActions();
  return true;
}

void MainWindow::markRemovedFromQueue(const QString& id) {
  TrialRecord* r = m_trials->find(id);
  if (!r) return;
  r->status = TrialRecord::Status::Stopped;
  r->reason = QStringLiteral("removed from the queue");
  m_trials->touch(id);
  m_session->markStopped(id, r->reason);
}

bool MainWindow::replayLog(const QString& path, double speed) {
  if (isBusy()) {
    statusBar()->showMessage(QStringLiteral("A trial is running; stop it before replaying"), 6000);
    return false;
  }
  if (m_replay) m_replay->deleteLater();  // this may run inside the old replay's finished signal
  m_replay = new ReplaySource(this);
  if (!m_replay->load(path)) {
    m_log->appendError(m_replay->errorString());
    statusBar()->showMessage(m_replay->errorString(), 8000);
    return false;
  }
  connectSource(m_replay, false);
  TrialRecord record;
  record.id = m_replay->trialId();
  record.replay = true;
  record.steps = m_replay->plannedSteps();
  record.config.world_size = m_replay->worldSize();
  record.config.name = QFileInfo(path).fileName().toStdString();
  if (m_trials->rowOf(record.id) >= 0) record.id += QStringLiteral("-%1").arg(++m_counter);
  m_trials->upsert(record);
  onTrialStarting(record.id);
  m_replay->start(speed);
  return true;
}

void MainWindow::setRunStatus(const QString& text) {
  m_statusProgress->setText(text);
  m_statusProgress->setVisible(!text.isEmpty());
}

QString MainWindow::displayName(const QString& id) const {
  const TrialRecord* r = m_trials->find(id);
  return r && !r->config.name.empty() ? QString::fromStdString(r->config.name) : id;
}

void MainWindow::onTrialStarting(const QString& id) {
  m_currentTrial = id;
  m_stats.clear();
  m_logs.pin(id);  // recorded or not, the running trial's events stay until it ends
  TrialRecord* r = m_trials->find(id);
  const QString name = r ? QString::fromStdString(r->config.name) : id;
  m_viewer->liveStarting(id, name);
  // The row of what is shown is the current one, unless the user holds a selection of several
  // (for a comparison) that a starting trial must not take away.
  if (const int row = m_trials->rowOf(id); row >= 0 && m_table->selectionModel()->selectedRows().size() <= 1)
    m_table->selectionModel()->setCurrentIndex(m_trials->index(row, 0),
                                               QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
  showStartPage(false);
  m_sessionActions->setBusy(true);
  if (r) {
    r->status = TrialRecord::Status::Running;
    r->started = QDateTime::currentDateTime();
    m_trials->touch(id);
  }
  statusBar()->clearMessage();  // the run's progress is the news now
  setRunStatus(QStringLiteral("running %1").arg(name));
  m_progressBar->setVisible(true);
  m_progressBar->setValue(0);
  updateActions();
}

void MainWindow::onEvents(const EventBatch& batch) {
  m_viewer->liveEvents(batch);
  m_logs.add(m_currentTrial, batch);  // the running trial, for the view and the comparison
  m_stats.add(batch);
  if (TrialRecord* r = m_trials->find(m_currentTrial)) {
    for (const auto& e : batch)
      if (r->replay && e.is<protocol::Hello>()) {  // a replay learns its config from the log
        const auto parsed = config::from_json(e.as<protocol::Hello>().config);
        const std::string name = r->config.name;
        r->config = parsed.config;
        r->config.name = name;
      }
    r->step_ms_median = m_stats.stepMsMedian();
    r->tokens_per_s = m_stats.tokensPerSecond();
    m_trials->touch(m_currentTrial);
  }
}

void MainWindow::onProgress(const TrialProgress& progress) {
  m_live->setProgress(progress);
  setRunStatus(QStringLiteral("%1: %2").arg(displayName(m_currentTrial), format_progress(progress)));
  m_progressBar->setMaximum(std::max(1, progress.steps));
  m_progressBar->setValue(std::min(progress.step, progress.steps));
  if (TrialRecord* r = m_trials->find(m_currentTrial)) {
    r->step = progress.step;
    r->steps = progress.steps;
    m_trials->touch(m_currentTrial);
  }
}

void MainWindow::onFinished(const TrialOutcome& outcome, bool recorded) {
  TrialRecord* r = m_trials->find(m_currentTrial);
  if (r) {
    switch (outcome.status) {
      case TrialOutcome::Status::Succeeded:
        r->status = TrialRecord::Status::Succeeded;
        break;
      case TrialOutcome::Status::Failed:
        r->status = TrialRecord::Status::Failed;
        break;
      case TrialOutcome::Status::Stopped:
        r->status = TrialRecord::Status::Stopped;
        break;
    }
    r->reason = outcome.reason;
    r->stderr_tail = outcome.stderr_tail;
    m_trials->touch(m_currentTrial);
  }
  m_logs.unpin(m_currentTrial);
  m_viewer->liveFinished(outcome);
  m_sessionActions->setBusy(false);
  m_progressBar->setVisible(false);
  if (outcome.status == TrialOutcome::Status::Failed) {
    m_log->appendError(QStringLiteral("trial %1 failed: %2").arg(displayName(m_currentTrial), outcome.reason) +
                       (outcome.stderr_tail.isEmpty() ? QString() : QStringLiteral("\n") + outcome.stderr_tail));
    setRunStatus(QStringLiteral("%1 failed: %2").arg(displayName(m_currentTrial), outcome.reason));
  } else {
    setRunStatus(QStringLiteral("%1 %2").arg(
        displayName(m_currentTrial),
        outcome.status == TrialOutcome::Status::Stopped ? QStringLiteral("stopped") : QStringLiteral("finished")));
  }
  updateActions();
  // A recorded trial is announced once its end is in the file (SessionController::liveTrialStored).
  if (!recorded) emit trialFinished(outcome);
}

void MainWindow::showImported(const QString& recordId) {
  const int row = m_trials->rowOf(recordId);
  if (row < 0 || isBusy() || m_table->selectionModel()->selectedRows().size() > 1) return;
  m_table->selectionModel()->setCurrentIndex(m_trials->index(row, 0),
                                             QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
  showStartPage(false);
}

void MainWindow::updateActions() {
  const bool busy = isBusy();
  if (QAction* a = action("actionStop")) a->setEnabled(busy);
  if (QAction* a = action("actionRun")) a->setEnabled(!busy);
  if (QAction* a = action("actionReplay")) a->setEnabled(!busy);
}

QStringList MainWindow::exportPlots(const QString& path) {
  // One file per plot: PATH for the timeline, PATH-steps and PATH-telemetry beside it.
  const QFileInfo info(path);
  const QString base = info.dir().filePath(info.completeBaseName());
  const QString ext = info.suffix().toLower();
  const QString suffix =
      ext == QLatin1String("pdf") || ext == QLatin1String("svg") ? QLatin1Char('.') + ext : QStringLiteral(".png");
  m_live->replotNow();
  QStringList written;
  const std::pair<QCustomPlot*, QString> plots[] = {
      {m_live->timeline(), base + suffix},
      {m_live->stepTime(), base + QStringLiteral("-steps") + suffix},
      {m_live->telemetry(), base + QStringLiteral("-telemetry") + suffix}};
  for (const auto& [plot, file] : plots)
    if (save_plot(plot, file)) written << file;
  return written;
}

void MainWindow::resizeEvent(QResizeEvent* event) {
  QMainWindow::resizeEvent(event);
  // After the layout settled: a window grown from a small size would otherwise give every new
  // pixel to the centre and leave the docks at their squeezed size (and save that layout).
  QTimer::singleShot(0, this, &MainWindow::keepDockShares);
}

void MainWindow::keepDockShares() {
  auto* trials = findChild<QDockWidget*>(QStringLiteral("trialsDock"));
  auto* form = findChild<QDockWidget*>(QStringLiteral("trialDock"));
  if (trials && trials->isVisible() && !trials->isFloating() && trials->height() < int(height() * kBottomDockShare) - 8)
    resizeDocks({trials}, {int(height() * kBottomDockShare)}, Qt::Vertical);
  if (form && form->isVisible() && !form->isFloating() && form->width() < std::min(kFormDockWidth, width() / 4))
    resizeDocks({form}, {std::min(kFormDockWidth, width() / 4)}, Qt::Horizontal);
}

void MainWindow::fitTrialsTable() {
  // Every column fits its contents, as on a reset (the header's own protected slot); then the name
  // gets what is left after a readable reason: a long name is elided (its tooltip has it whole)
  // rather than pushing the reason off the table, and empty tag and note columns are left out.
  QHeaderView* header = m_table->horizontalHeader();
  bool tags = false, notes = false;
  for (int row = 0; row < m_trials->rowCount(); ++row) {
    tags = tags || !m_trials->record(row).tags.isEmpty();
    notes = notes || !m_trials->record(row).notes.isEmpty();
  }
  m_table->setColumnHidden(TrialsModel::Tags, !tags);
  m_table->setColumnHidden(TrialsModel::Notes, !notes);
  QMetaObject::invokeMethod(header, "resizeSections");
  int others = 0;
  for (int c = 0; c < TrialsModel::ColumnCount; ++c)
    if (c != TrialsModel::Name && c != TrialsModel::Reason && !m_table->isColumnHidden(c))
      others += header->sectionSize(c);
  const int chars = m_table->fontMetrics().averageCharWidth();
  const int reasonMin = 26 * chars, nameMin = 14 * chars;
  const int longest = std::max(static_cast<QAbstractItemView*>(m_table)->sizeHintForColumn(TrialsModel::Name),
                               header->sectionSizeHint(TrialsModel::Name));
  const int room = m_table->viewport()->width() - others - reasonMin;
  header->resizeSection(TrialsModel::Name, std::clamp(room, nameMin, std::max(nameMin, longest)));
}

bool MainWindow::eventFilter(QObject* watched, QEvent* event) {
  if (watched == m_table->viewport() && event->type() == QEvent::Resize && !m_refitTable->isActive())
    m_refitTable->start();
  if (watched == this && (event->type() == QEvent::DragEnter || event->type() == QEvent::DragMove)) {
    auto* e = static_cast<QDragMoveEvent*>(event);
    if (event->type() == QEvent::DragEnter) m_dropAccepted = m_sessionActions->canDrop(e->mimeData());
    if (m_dropAccepted) e->acceptProposedAction();
    return true;
  }
  if (watched == this && event->type() == QEvent::Drop) {
    auto* e = static_cast<QDropEvent*>(event);
    if (m_sessionActions->drop(e->mimeData())) e->acceptProposedAction();
    return true;
  }
  return QMainWindow::eventFilter(watched, event);
}

void MainWindow::loadSettings() {
  QSettings settings;
  restoreGeometry(settings.value(QStringLiteral("window/geometry")).toByteArray());
  restoreState(settings.value(QStringLiteral("window/state")).toByteArray());
  apply_theme(theme_from_string(settings.value(QStringLiteral("view/theme")).toString()));
  const QByteArray last = settings.value(QStringLiteral("trial/lastConfig")).toByteArray();
  if (last.isEmpty()) return;
  const auto json = nlohmann::json::parse(last.toStdString(), nullptr, false);
  if (json.is_discarded()) return;
  const auto parsed = config::from_json(json);
  if (parsed.ok()) m_form->setConfig(parsed.config);
}

void MainWindow::saveSettings() {
  keepDockShares();
  QSettings settings;
  settings.setValue(QStringLiteral("window/geometry"), saveGeometry());
  settings.setValue(QStringLiteral("window/state"), saveState());
  settings.setValue(QStringLiteral("view/theme"), theme_to_string(current_theme()));
  settings.setValue(QStringLiteral("trial/lastConfig"),
                    QByteArray::fromStdString(config::to_json(m_form->config()).dump()));
}

void MainWindow::closeEvent(QCloseEvent* event) {
  // Closing the window must not leave ranks training in the background.
  m_queue->clearPending();
  if (m_queue->runner()->isActive()) m_queue->runner()->stopAndWait();
  if (m_replay) m_replay->stop();
  if (m_options.useSettings) saveSettings();
  event->accept();
}

}  // namespace tunebench::ui

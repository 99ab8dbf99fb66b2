#include "ui/windows/main_window.h"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QDateTime>
#include <QDir>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QHeaderView>
#include <QInputDialog>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QProgressBar>
#include <QScrollArea>
#include <QSettings>
#include <QStatusBar>
#include <QTableView>
#include <QToolBar>

#include "ui/models/trials_model.h"
#include "ui/plots/step_time_plot.h"
#include "ui/plots/telemetry_plot.h"
#include "ui/plots/timeline_plot.h"
#include "ui/runner/replay_source.h"
#include "ui/runner/trial_queue.h"
#include "ui/runner/trial_runner.h"
#include "ui/windows/analysis_controller.h"
#include "ui/windows/live_view.h"
#include "ui/windows/prediction_controller.h"
#include "ui/windows/log_pane.h"
#include "ui/windows/plot_export.h"
#include "ui/windows/session_actions.h"
#include "ui/windows/session_controller.h"
#include "ui/windows/trial_form.h"

// Resources compiled into a static library are not registered on their own.
static void init_tunebench_resources() { Q_INIT_RESOURCE(tunebench); }

namespace tunebench::ui {

MainWindow::MainWindow(const Options& options, QWidget* parent) : QMainWindow(parent), m_options(options) {
  init_tunebench_resources();
  setObjectName(QStringLiteral("mainWindow"));
  setWindowTitle(QStringLiteral("Tunebench"));
  setWindowIcon(QIcon(QStringLiteral(":/tunebench/icons/tunebench.svg")));
  setDockNestingEnabled(true);

  m_live = new LiveView(this);
  setCentralWidget(m_live);
  m_form = new TrialForm;
  m_trials = new TrialsModel(this);
  m_log = new LogPane;
  m_queue = new TrialQueue(this);
  // Session store first, so a trial is recorded before the window (and trialFinished listeners)
  // see it end.
  m_session = new SessionController(m_trials, this);
  connect(m_queue, &TrialQueue::trialStarting, m_session, &SessionController::beginLiveTrial);
  connect(m_queue->runner(), &LiveSource::eventsArrived, m_session, &SessionController::addEvents);
  connect(m_queue->runner(), &LiveSource::finished, m_session, &SessionController::finishLiveTrial);
  connectSource(m_queue->runner());
  connect(m_queue, &TrialQueue::trialStarting, this, &MainWindow::onTrialStarting);
  connect(m_queue, &TrialQueue::queueChanged, this, &MainWindow::updateActions);

  createDocks();
  createActions();
  m_sessionActions = new SessionActions(this, m_session, options.useSettings);
  m_analysis = new AnalysisController(this);
  // Comparisons read session trials from the store; trials of this run come from the cache.
  m_analysis->setTrialLogProvider([this](int row) -> std::optional<protocol::TrialLog> {
    if (row < 0 || row >= m_trials->rowCount()) return std::nullopt;
    const QString id = m_trials->record(row).id;
    if (m_session->storeId(id) >= 0)
      if (auto loaded = m_session->loadTrial(id); loaded && !loaded->log.ranks.empty()) return loaded->log;
    return m_analysis->cachedLog(row);
  });

  new PredictionController(this);  // issue 11: the Prediction dock and Analysis > What if…

  m_statusProgress = new QLabel(QStringLiteral("idle"));
  m_progressBar = new QProgressBar;
  m_progressBar->setMaximumWidth(180);
  m_progressBar->setVisible(false);
  m_statusDevices = new QLabel;
  statusBar()->addWidget(m_statusProgress, 1);
  statusBar()->addPermanentWidget(m_progressBar);
  statusBar()->addPermanentWidget(m_statusDevices);

  const DeviceInventory devices = options.detectDevices ? detect_devices() : options.devices;
  m_form->setDevices(devices);
  m_statusDevices->setText(devices.hasGpu() ? QStringLiteral("%1 GPU(s)").arg(devices.gpus.size()) : QStringLiteral("CPU only"));
  m_statusDevices->setToolTip(devices.summary());
  // Without a GPU the only trials that can run are CPU ones: start from the tiny CPU preset.
  m_form->applyPreset(devices.hasGpu() ? QStringLiteral("7b-single") : QStringLiteral("cpu-tiny"));
  if (options.useSettings) loadSettings();
  m_sessionActions->openInitialSession(options.sessionPath);
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
  m_table->horizontalHeader()->setStretchLastSection(true);  // the reason gets the rest
  m_table->verticalHeader()->setVisible(false);
  m_table->setAlternatingRowColors(true);
  m_table->setWordWrap(false);
  auto* tableDock = new QDockWidget(QStringLiteral("Trials"), this);
  tableDock->setObjectName(QStringLiteral("trialsDock"));
  tableDock->setWidget(m_table);
  addDockWidget(Qt::BottomDockWidgetArea, tableDock);

  auto* logDock = new QDockWidget(QStringLiteral("Log"), this);
  logDock->setObjectName(QStringLiteral("logDock"));
  logDock->setWidget(m_log);
  addDockWidget(Qt::BottomDockWidgetArea, logDock);
  splitDockWidget(tableDock, logDock, Qt::Horizontal);
  resizeDocks({tableDock}, {230}, Qt::Vertical);
  resizeDocks({tableDock, logDock}, {3, 2}, Qt::Horizontal);  // the table's reasons need the room
  resizeDocks({formDock}, {380}, Qt::Horizontal);
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
  QAction* stopAll = make("actionStopAll", QStringLiteral("Stop and clear &queue"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_Period),
                          QStringLiteral("Stop the running trial and drop the queued ones"));
  QAction* validate = make("actionValidate", QStringLiteral("&Validate"), QKeySequence(Qt::CTRL | Qt::Key_Return),
                           QStringLiteral("Check the form without running"));
  QAction* replay = make("actionReplay", QStringLiteral("&Replay event log…"), QKeySequence(Qt::CTRL | Qt::Key_O),
                         QStringLiteral("Play a recorded .jsonl event log into the live views"));
  QAction* follow = make("actionFollow", QStringLiteral("&Follow latest"), QKeySequence(Qt::Key_F),
                         QStringLiteral("Keep the newest steps in view on the timeline"));
  follow->setCheckable(true);
  follow->setChecked(true);
  QAction* zoomIn = make("actionZoomIn", QStringLiteral("Zoom &in"), QKeySequence(QKeySequence::ZoomIn), QStringLiteral("Zoom the timeline in"));
  QAction* zoomOut = make("actionZoomOut", QStringLiteral("Zoom &out"), QKeySequence(QKeySequence::ZoomOut), QStringLiteral("Zoom the timeline out"));
  QAction* exportAct = make("actionExport", QStringLiteral("&Export plots…"), QKeySequence(Qt::CTRL | Qt::Key_E),
                              QStringLiteral("Save the timeline, step-time and telemetry plots as PNG, PDF or SVG"));
  QAction* quit = make("actionQuit", QStringLiteral("&Quit"), QKeySequence(QKeySequence::Quit), QStringLiteral("Stop everything and quit"));

  connect(run, &QAction::triggered, this, &MainWindow::runTrial);
  connect(queueAct, &QAction::triggered, this, &MainWindow::runTrial);  // the queue starts it when idle
  connect(stop, &QAction::triggered, this, &MainWindow::stopTrial);
  connect(stopAll, &QAction::triggered, this, [this] {
    for (const TrialRequest& pending : m_queue->pending())
      if (TrialRecord* r = m_trials->find(pending.id)) {
        r->status = TrialRecord::Status::Stopped;
        r->reason = QStringLiteral("removed from the queue");
        m_trials->touch(pending.id);
        m_session->markStopped(pending.id, r->reason);
      }
    m_queue->stopAll();
    if (m_replay) m_replay->stop();
  });
  connect(validate, &QAction::triggered, this, [this] {
    const int n = m_form->validateAndShow();
    statusBar()->showMessage(n ? QStringLiteral("%1 problem(s) in the form").arg(n) : QStringLiteral("The trial is valid"), 4000);
  });
  connect(replay, &QAction::triggered, this, [this] {
    const QString path = QFileDialog::getOpenFileName(this, QStringLiteral("Replay event log"), {},
                                                      QStringLiteral("Event logs (*.jsonl);;All files (*)"));
    if (path.isEmpty()) return;
    bool ok = false;
    const double speed = QInputDialog::getDouble(this, QStringLiteral("Replay speed"),
                                                 QStringLiteral("Speed (1 = as recorded, 0 = as fast as possible):"), 1.0, 0.0, 1000.0, 1, &ok);
    if (ok) replayLog(path, speed);
  });
  connect(follow, &QAction::toggled, m_live->timeline(), &TimelinePlot::setFollowLatest);
  connect(m_live->timeline(), &TimelinePlot::followLatestChanged, follow, &QAction::setChecked);
  connect(zoomIn, &QAction::triggered, this, [this] { m_live->timeline()->zoomBy(0.5); });
  connect(zoomOut, &QAction::triggered, this, [this] { m_live->timeline()->zoomBy(2.0); });
  connect(exportAct, &QAction::triggered, this, [this] {
    const QString path = QFileDialog::getSaveFileName(this, QStringLiteral("Export plots"), QStringLiteral("timeline.png"),
                                                      QStringLiteral("PNG image (*.png);;PDF document (*.pdf);;SVG drawing (*.svg)"));
    if (path.isEmpty()) return;
    const QStringList written = exportPlots(path);
    statusBar()->showMessage(written.isEmpty() ? QStringLiteral("Could not write %1").arg(path)
                                               : QStringLiteral("Wrote %1").arg(written.join(QStringLiteral(", "))), 8000);
  });
  connect(quit, &QAction::triggered, this, &QWidget::close);

  QMenu* file = menuBar()->addMenu(QStringLiteral("&File"));
  file->setObjectName(QStringLiteral("menuFile"));
  file->addAction(replay);
  file->addAction(exportAct);
  file->addSeparator();
  file->addAction(quit);
  QMenu* trial = menuBar()->addMenu(QStringLiteral("&Trial"));
  trial->setObjectName(QStringLiteral("menuTrial"));
  for (QAction* a : {run, queueAct, stop, stopAll, validate}) trial->addAction(a);
  QMenu* view = menuBar()->addMenu(QStringLiteral("&View"));
  view->setObjectName(QStringLiteral("menuView"));
  for (QAction* a : {follow, zoomIn, zoomOut}) view->addAction(a);
  view->addSeparator();
  for (QDockWidget* dock : findChildren<QDockWidget*>()) view->addAction(dock->toggleViewAction());
  QMenu* help = menuBar()->addMenu(QStringLiteral("&Help"));
  help->setObjectName(QStringLiteral("menuHelp"));
  help->addAction(QStringLiteral("&About Tunebench"), this, [this] {
    QMessageBox::about(this, QStringLiteral("About Tunebench"),
                       QStringLiteral("<b>Tunebench</b> runs short, instrumented training trials and shows where every "
                                      "millisecond of a step goes."));
  });

  QToolBar* bar = addToolBar(QStringLiteral("Trial"));
  bar->setObjectName(QStringLiteral("trialToolBar"));
  bar->setToolButtonStyle(Qt::ToolButtonTextOnly);
  for (QAction* a : {run, queueAct, stop}) bar->addAction(a);
  bar->addSeparator();
  bar->addAction(replay);
}

QAction* MainWindow::action(const QString& objectName) const { return findChild<QAction*>(objectName); }

QMenu* MainWindow::menu(const QString& objectName) const { return findChild<QMenu*>(objectName); }

bool MainWindow::isBusy() const { return m_queue->runner()->isActive() || (m_replay && m_replay->isActive()); }

void MainWindow::connectSource(LiveSource* source) {
  connect(source, &LiveSource::started, this, &MainWindow::updateActions);
  connect(source, &LiveSource::eventsArrived, this, &MainWindow::onEvents);
  connect(source, &LiveSource::progress, this, &MainWindow::onProgress);
  connect(source, &LiveSource::logLine, m_log, &LogPane::appendLine);
  connect(source, &LiveSource::finished, this, &MainWindow::onFinished);
}

bool MainWindow::runTrial() {
  if (const int n = m_form->validateAndShow()) {
    statusBar()->showMessage(QStringLiteral("Not started: %1 problem(s) in the form, shown next to the fields").arg(n), 6000);
    return false;
  }
  if (m_replay && m_replay->isActive()) {
    statusBar()->showMessage(QStringLiteral("Stop the replay first (Ctrl+.)"), 6000);
    return false;
  }
  return !queueConfig(m_form->config()).isEmpty();
}

QString MainWindow::queueConfig(const config::TrialConfig& config) {
  if (!config::validate(config).empty()) return {};
  TrialRequest request;
  request.id = QStringLiteral("t%1-%2").arg(QDateTime::currentDateTime().toString(QStringLiteral("yyyyMMdd-HHmmss"))).arg(++m_counter);
  request.config = config;
  if (request.config.name.empty()) request.config.name = request.id.toStdString();
  request.worker_program = m_options.workerProgram;
  // Nothing stored in a session someone else made runs unseen: show argv and environment first.
  if (m_session->needsLaunchConfirmation() && !m_sessionActions->confirmLaunch(request)) return {};
  TrialRecord record;
  record.id = request.id;
  record.config = request.config;
  record.steps = int(request.config.steps);
  m_trials->upsert(record);
  m_session->addQueuedTrial(record, m_session->takeLaunchSource());
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
  connectSource(m_replay);
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

void MainWindow::onTrialStarting(const QString& id) {
  m_currentTrial = id;
  m_stats.clear();
  TrialRecord* r = m_trials->find(id);
  const QString name = r ? QString::fromStdString(r->config.name) : id;
  m_live->clear(name);
  m_sessionActions->showStartPage(false);
  if (r) {
    r->status = TrialRecord::Status::Running;
    r->started = QDateTime::currentDateTime();
    m_trials->touch(id);
  }
  m_statusProgress->setText(QStringLiteral("running %1").arg(name));
  m_progressBar->setVisible(true);
  m_progressBar->setValue(0);
  updateActions();
}

void MainWindow::onEvents(const EventBatch& batch) {
  m_live->addEvents(batch);
  m_logs.add(m_currentTrial, batch);  // kept for the comparison (issue 7)
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
  m_statusProgress->setText(QStringLiteral("%1: %2").arg(m_currentTrial, format_progress(progress)));
  m_progressBar->setMaximum(std::max(1, progress.steps));
  m_progressBar->setValue(std::min(progress.step, progress.steps));
  if (TrialRecord* r = m_trials->find(m_currentTrial)) {
    r->step = progress.step;
    r->steps = progress.steps;
    m_trials->touch(m_currentTrial);
  }
}

void MainWindow::onFinished(const TrialOutcome& outcome) {
  TrialRecord* r = m_trials->find(m_currentTrial);
  if (r) {
    switch (outcome.status) {
      case TrialOutcome::Status::Succeeded: r->status = TrialRecord::Status::Succeeded; break;
      case TrialOutcome::Status::Failed: r->status = TrialRecord::Status::Failed; break;
      case TrialOutcome::Status::Stopped: r->status = TrialRecord::Status::Stopped; break;
    }
    r->reason = outcome.reason;
    r->stderr_tail = outcome.stderr_tail;
    m_trials->touch(m_currentTrial);
  }
  m_live->setOutcome(outcome);
  m_live->replotNow();
  m_progressBar->setVisible(false);
  if (outcome.status == TrialOutcome::Status::Failed) {
    m_log->appendError(QStringLiteral("trial %1 failed: %2").arg(outcome.trial_id, outcome.reason) +
                       (outcome.stderr_tail.isEmpty() ? QString() : QStringLiteral("\n") + outcome.stderr_tail));
    m_statusProgress->setText(QStringLiteral("%1 failed: %2").arg(outcome.trial_id, outcome.reason));
  } else {
    m_statusProgress->setText(QStringLiteral("%1 %2").arg(outcome.trial_id,
                                                          outcome.status == TrialOutcome::Status::Stopped ? QStringLiteral("stopped")
                                                                                                          : QStringLiteral("finished")));
  }
  updateActions();
  emit trialFinished(outcome);
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
  const QString suffix = ext == QLatin1String("pdf") || ext == QLatin1String("svg") ? QLatin1Char('.') + ext : QStringLiteral(".png");
  m_live->replotNow();
  QStringList written;
  const std::pair<QCustomPlot*, QString> plots[] = {{m_live->timeline(), base + suffix},
                                                    {m_live->stepTime(), base + QStringLiteral("-steps") + suffix},
                                                    {m_live->telemetry(), base + QStringLiteral("-telemetry") + suffix}};
  for (const auto& [plot, file] : plots)
    if (save_plot(plot, file)) written << file;
  return written;
}

void MainWindow::loadSettings() {
  QSettings settings;
  restoreGeometry(settings.value(QStringLiteral("window/geometry")).toByteArray());
  restoreState(settings.value(QStringLiteral("window/state")).toByteArray());
  const QByteArray last = settings.value(QStringLiteral("trial/lastConfig")).toByteArray();
  if (last.isEmpty()) return;
  const auto json = nlohmann::json::parse(last.toStdString(), nullptr, false);
  if (json.is_discarded()) return;
  const auto parsed = config::from_json(json);
  if (parsed.ok()) m_form->setConfig(parsed.config);
}

void MainWindow::saveSettings() {
  QSettings settings;
  settings.setValue(QStringLiteral("window/geometry"), saveGeometry());
  settings.setValue(QStringLiteral("window/state"), saveState());
  settings.setValue(QStringLiteral("trial/lastConfig"), QByteArray::fromStdString(config::to_json(m_form->config()).dump()));
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

#include "ui/windows/trace_import_actions.h"

#include <algorithm>

#include <QAction>
#include <QFileInfo>
#include <QItemSelectionModel>
#include <QMenu>
#include <QProgressDialog>
#include <QStatusBar>
#include <QTableView>

#include "core/config/known_settings.h"
#include "ui/windows/live_view.h"
#include "ui/windows/log_pane.h"
#include "ui/windows/main_window.h"
#include "ui/windows/session_actions.h"
#include "ui/windows/session_controller.h"

namespace tunebench::ui {

namespace {
QString megabytes(qint64 bytes) { return QString::number(double(bytes) / 1e6, 'f', bytes < 10'000'000 ? 1 : 0); }

// The trial's hellos and steps as the live view takes them from a run (steps in the order their
// ranks finished them). Tokens per step, for the throughput plot, when the settings know them.
EventBatch events_of(const protocol::TrialLog& log) {
  const nlohmann::json config = log.config();
  int64_t tokens = 0;
  if (config::is_known(config, "micro_batch") && config::is_known(config, "seq_len") &&
      config::is_known(config, "grad_accum"))
    tokens = config::from_json(config).config.tokens_per_rank_step();
  EventBatch events;
  int64_t t0 = INT64_MAX;
  for (const auto& [rank, r] : log.ranks)
    for (const auto& s : r.steps) t0 = std::min(t0, s.start_us);
  for (const auto& [rank, r] : log.ranks)
    if (r.hello) events.push_back({{protocol::kSchemaVersion, log.trial, rank, t0}, *r.hello});
  for (const auto& [rank, r] : log.ranks)
    for (protocol::Step s : r.steps) {
      if (s.tokens == 0) s.tokens = tokens;
      events.push_back({{protocol::kSchemaVersion, log.trial, rank, s.end_us}, std::move(s)});
    }
  std::stable_sort(events.begin(), events.end(),
                   [](const protocol::Event& a, const protocol::Event& b) { return a.header.t_us < b.header.t_us; });
  return events;
}
}  // namespace

TraceImportActions::TraceImportActions(MainWindow* window, SessionController* session, SessionActions* actions)
    : QObject(window), m_window(window), m_session(session), m_actions(actions) {
  m_settingsAction = new QAction(QStringLiteral("&Settings…"), m_window);
  m_settingsAction->setObjectName(QStringLiteral("actionTrialSettings"));
  m_settingsAction->setStatusTip(
      QStringLiteral("The selected trial's settings; fill in the unknown ones of an imported torch.profiler trace"));
  m_window->menu(QStringLiteral("menuTrial"))->addAction(m_settingsAction);
  connect(m_settingsAction, &QAction::triggered, this, [this] {
    const QStringList ids = m_actions->selectedTrialIds();
    if (!ids.isEmpty()) showSettings(ids.first());
  });
  auto update = [this] { m_settingsAction->setEnabled(m_actions->selectedTrialIds().size() == 1); };
  connect(m_window->trialsView()->selectionModel(), &QItemSelectionModel::selectionChanged, this, update);
  update();
}

bool TraceImportActions::importTraces(const QStringList& files, const QString& name, const QStringList& settings) {
  if (m_job) {
    m_actions->showError(QStringLiteral("Import traces"), QStringLiteral("An import is running; wait for it to end."));
    return false;
  }
  import::TraceImportOptions options;
  options.name = name.toStdString();
  for (const QString& s : settings) options.settings.push_back(s.toStdString());
  m_job = new TraceImportJob(files, std::move(options), this);
  m_progress = new QProgressDialog(QStringLiteral("Reading %1 torch.profiler trace(s)…").arg(files.size()),
                                   QStringLiteral("Cancel"), 0, 1000, m_window);
  m_progress->setObjectName(QStringLiteral("traceImportProgress"));
  m_progress->setWindowTitle(QStringLiteral("Import traces"));
  m_progress->setWindowModality(Qt::WindowModal);
  m_progress->setMinimumDuration(0);
  m_progress->setAutoClose(false);
  m_progress->setAutoReset(false);
  m_progress->setValue(0);
  connect(m_progress, &QProgressDialog::canceled, m_job, &TraceImportJob::cancel);
  connect(m_job, &TraceImportJob::progress, this, [this, n = files.size()](qint64 done, qint64 total) {
    if (!m_progress) return;
    m_progress->setValue(total > 0 ? int(1000 * done / total) : 0);
    m_progress->setLabelText(QStringLiteral("Reading %1 torch.profiler trace(s): %2 of %3 MB")
                                 .arg(n)
                                 .arg(megabytes(done), megabytes(total)));
  });
  connect(m_job, &TraceImportJob::succeeded, this, [this] {
    const import::TraceTrial& trial = m_job->trial();
    const auto result = m_session->importTraceTrial(trial);
    if (!result) return finishImport(false, m_session->errorString());
    const QString message = QStringLiteral("Imported %1 from torch.profiler traces: %2 of %3 rank(s), %4 steps, %5 MB")
                                .arg(QString::fromStdString(result->name))
                                .arg(result->ranks)
                                .arg(result->world_size)
                                .arg(result->steps)
                                .arg(megabytes(result->json_bytes));
    m_window->statusBar()->showMessage(message, 10000);
    m_window->logPane()->appendLine({-1, LogLine::Source::Runner, message});
    for (const auto& w : result->warnings)
      m_window->logPane()->appendLine(
          {-1, LogLine::Source::Runner, QStringLiteral("  %1").arg(QString::fromStdString(w))});
    if (!result->unknown_knobs.empty())
      m_window->logPane()->appendLine(
          {-1, LogLine::Source::Runner,
           QStringLiteral("  %1 settings are unknown; fill in the ones you know with Trial > Settings…")
               .arg(result->unknown_knobs.size())});
    // Shown in the live views as a run would be, unless a run is using them.
    if (!m_window->isBusy()) {
      m_window->liveView()->clear(
          QStringLiteral("%1 (imported from torch.profiler traces)").arg(QString::fromStdString(result->name)));
      m_window->liveView()->addEvents(events_of(trial.log));
      m_window->liveView()->replotNow();
    }
    emit traceImported(QStringLiteral("s%1").arg(result->trial_id));
    finishImport(true, {});
  });
  connect(m_job, &TraceImportJob::failed, this, [this](const QString& message) { finishImport(false, message); });
  m_job->start();
  return true;
}

void TraceImportActions::finishImport(bool ok, const QString& message) {
  const bool cancelled = m_job && m_job->cancelled();
  if (m_progress) m_progress->deleteLater();
  if (m_job) m_job->deleteLater();
  m_progress = nullptr;
  m_job = nullptr;
  if (!ok && cancelled) {
    m_window->statusBar()->showMessage(QStringLiteral("Import cancelled: nothing was added to the session"), 8000);
  } else if (!ok) {
    m_actions->showError(
        QStringLiteral("Import traces"),
        QStringLiteral("The traces were not imported: %1\nNothing was added to the session.").arg(message));
  }
  emit traceImportEnded();
}

KnownSettingsDialog* TraceImportActions::showSettings(const QString& recordId) {
  const auto info = m_session->trialInfo(recordId);
  if (!info) return nullptr;
  if (m_dialog) m_dialog->close();
  const bool imported = !config::unknown_knobs(info->config).empty();
  m_dialog = new KnownSettingsDialog(QString::fromStdString(info->name), info->config, imported, m_window);
  m_dialog->setAttribute(Qt::WA_DeleteOnClose);
  connect(m_dialog, &KnownSettingsDialog::saveRequested, this, [this, recordId] {
    if (m_session->editKnownSettings(recordId, m_dialog->changedSettings(), m_dialog->clearedKeys())) {
      m_window->statusBar()->showMessage(QStringLiteral("Settings saved"), 6000);
      m_dialog->accept();
    } else {
      m_dialog->showProblems(m_session->errorString());
    }
  });
  m_dialog->open();
  return m_dialog;
}

}  // namespace tunebench::ui

#include "ui/windows/trace_import_actions.h"

#include <algorithm>

#include <QAction>
#include <QDir>
#include <QFileInfo>
#include <QItemSelectionModel>
#include <QLocale>

#include "core/config/known_settings.h"
#include "core/import/torch_trace_reader.h"
#include "core/import/trace_import.h"
#include "ui/runner/background_jobs.h"
#include "ui/windows/dialog_front.h"
#include "ui/windows/session_actions.h"
#include "ui/windows/session_controller.h"

namespace tunebench::ui {

TraceImportActions::TraceImportActions(SessionController* session, SessionActions* actions,
                                       QItemSelectionModel* selection, QWidget* dialogParent, QObject* parent)
    : QObject(parent), m_session(session), m_actions(actions), m_parent(dialogParent) {
  setObjectName(QStringLiteral("traceImportActions"));
  m_actions->addImporter({QStringLiteral("torch.profiler traces"),
                          {QStringLiteral("*.json"), QStringLiteral("*.gz")},
                          [](const QString& path) {
                            // By content: a Chrome-trace JSON (plain or gzip), not an event log.
                            try {
                              return import::detect_file_kind(path.toStdString()) == import::FileKind::TorchTrace;
                            } catch (const std::exception&) {
                              return false;  // unreadable: not ours to claim
                            }
                          },
                          [this](const QStringList& paths) { return importTraces(paths); }});

  m_settingsAction = new QAction(QStringLiteral("&Settings…"), this);
  m_settingsAction->setObjectName(QStringLiteral("actionTrialSettings"));
  const QString tip =
      QStringLiteral("The selected trial's settings; fill in the unknown ones of an imported torch.profiler trace");
  m_settingsAction->setStatusTip(tip);
  m_settingsAction->setToolTip(tip);
  m_actions->addTrialAction(m_settingsAction);  // the Trial menu and the trials' context menu
  connect(m_settingsAction, &QAction::triggered, this, [this] {
    const QStringList ids = m_actions->selectedTrialIds();
    if (ids.size() == 1 && !showSettings(ids.first()))
      emit statusMessage(
          QStringLiteral("This trial is not stored in the session (a replay): it has no settings to show"), 6000);
  });
  auto update = [this, selection] { m_settingsAction->setEnabled(selection->selectedRows().size() == 1); };
  connect(selection, &QItemSelectionModel::selectionChanged, this, update);
  update();

  connect(m_session, &SessionController::tracesImported, this, &TraceImportActions::reportImported);
  BackgroundJobs* jobs = m_session->jobs();
  connect(jobs, &BackgroundJobs::jobFinished, this, [this](int id, const QString&) { onJobEnded(id, false); });
  connect(jobs, &BackgroundJobs::jobFailed, this,
          [this](const JobFailure& f) { onJobEnded(f.id, false); });  // SessionActions says why
  connect(jobs, &BackgroundJobs::jobCancelled, this, [this](int id, const QString&) { onJobEnded(id, true); });
  connect(jobs, &BackgroundJobs::progress, this,
          [this](int id, const QString&, qint64 done, qint64 total, const QString& text) {
            if (id != m_job || !m_progress) return;
            if (total > 0) {
              m_progress->setRange(0, 1000);
              m_progress->setValue(int(1000 * done / total));
            }
            m_progress->setLabelText(text.left(1).toUpper() + text.mid(1));
          });
}

bool TraceImportActions::importTraces(const QStringList& files, const QString& name, const QStringList& settings) {
  if (m_job) {
    m_actions->showError(QStringLiteral("Import traces"),
                         QStringLiteral("Traces are being imported; wait for them or cancel them first."));
    return false;
  }
  m_job = m_session->importTraceTrial(files, name, settings);
  if (!m_job) {
    m_actions->showError(QStringLiteral("Import traces"),
                         QStringLiteral("There is no session to import into: open or create one first."));
    return false;
  }
  // Not modal: the window goes on working (a run is watched and stopped as usual) while it reads.
  m_progress = new QProgressDialog(QStringLiteral("Reading %1 torch.profiler trace(s)…").arg(files.size()),
                                   QStringLiteral("Cancel"), 0, 0, m_parent);
  m_progress->setObjectName(QStringLiteral("traceImportProgress"));
  m_progress->setWindowTitle(QStringLiteral("Import traces"));
  m_progress->setWindowModality(Qt::NonModal);
  m_progress->setAttribute(Qt::WA_DeleteOnClose);
  m_progress->setMinimumDuration(0);
  m_progress->setAutoClose(false);
  m_progress->setAutoReset(false);
  m_progress->setMinimumWidth(420);
  connect(m_progress, &QProgressDialog::canceled, this, [this] {
    if (m_job) m_session->jobs()->cancel(m_job);
  });
  m_progress->show();
  return true;
}

void TraceImportActions::reportImported(const QStringList& files, const import::TraceImportResult& result,
                                        const QString& recordId) {
  const QString message =
      QStringLiteral("Imported %1 from torch.profiler traces: %2 of %3 rank(s), %4 steps, %5 of JSON")
          .arg(QString::fromStdString(result.name))
          .arg(result.ranks)
          .arg(result.world_size)
          .arg(result.steps)  // per rank, as the table, the title and the command line count them
          .arg(QLocale().formattedDataSize(result.json_bytes, 1, QLocale::DataSizeSIFormat));
  emit statusMessage(message, 10000);
  emit logMessage(message);
  // The files, by name when they share a folder (a run's ranks usually do).
  const QString dir = QFileInfo(files.value(0)).absolutePath();
  QStringList names;
  for (const QString& f : files)
    names << (QFileInfo(f).absolutePath() == dir ? QFileInfo(f).fileName() : QDir::toNativeSeparators(f));
  emit logMessage(
      QStringLiteral("  read %1 in %2").arg(names.join(QStringLiteral(", ")), QDir::toNativeSeparators(dir)));
  for (const auto& w : result.warnings) emit logMessage(QStringLiteral("  %1").arg(QString::fromStdString(w)));
  if (!result.unknown_knobs.empty())
    emit logMessage(QStringLiteral("  %1 settings are unknown; fill in the ones you know with Trial > Settings…")
                        .arg(result.unknown_knobs.size()));
  emit traceImported(recordId);
}

void TraceImportActions::onJobEnded(int id, bool cancelled) {
  if (id == 0 || id != m_job) return;
  m_job = 0;
  if (m_progress) m_progress->close();  // deletes itself
  m_progress = nullptr;
  if (cancelled) emit statusMessage(QStringLiteral("Import cancelled: nothing was added to the session"), 8000);
  emit traceImportEnded();
}

KnownSettingsDialog* TraceImportActions::showSettings(const QString& recordId) {
  const auto info = m_session->trialInfo(recordId);
  if (!info) return nullptr;
  if (m_dialog) m_dialog->close();
  const bool imported = !config::unknown_knobs(info->config).empty();
  m_dialog = new KnownSettingsDialog(QString::fromStdString(info->name), info->config, imported, m_parent);
  m_dialog->setAttribute(Qt::WA_DeleteOnClose);
  connect(m_dialog, &KnownSettingsDialog::saveRequested, this, [this, recordId, name = info->name] {
    if (m_session->editKnownSettings(recordId, m_dialog->changedSettings(), m_dialog->clearedKeys())) {
      emit statusMessage(QStringLiteral("Settings of %1 saved").arg(QString::fromStdString(name)), 6000);
      emit settingsSaved(recordId);
      m_dialog->accept();
    } else {
      m_dialog->showProblems(m_session->errorString());
    }
  });
  open_in_front(m_dialog);  // window-modal, not blocking
  return m_dialog;
}

}  // namespace tunebench::ui

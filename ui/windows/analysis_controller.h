// AnalysisController: the workbench's "Analysis" menu (menu(), which the window places). It turns
// selected rows of the trials table into TrialLogs through a provider, opens a ComparisonWindow on
// them, queues the follow-up trials its suggestion buttons ask for, and runs the sweep dialog:
// plan -> queue -> progress -> comparison of the sweep when its last trial finished, the
// investigation of a stored trial (InvestigateWindow) and the search for the fastest
// configuration (AutotuneDialog).
//
// Logs come from the provider when it has them (by default the events this window received:
// LiveTrialTracker::logs(), the running trial and replays); trials stored in the session file are
// loaded by a background job, and the comparison opens when they are there. Follow-ups and sweeps
// go through the TrialLauncher, like every other way to start a trial; a follow-up of a trial
// from someone else's session file is previewed first.
#pragma once

#include <functional>
#include <optional>

#include <QList>
#include <QObject>
#include <QPointer>

#include "core/config/trial_config.h"
#include "core/protocol/trial_log.h"
#include "ui/windows/autotune_dialog.h"
#include "ui/windows/comparison_window.h"  // QPointer needs the complete types
#include "ui/windows/investigate_window.h"
#include "ui/windows/sweep_dialog.h"
#include "ui/windows/plan_run.h"
#include "ui/windows/trial_launcher.h"
#include "ui/windows/workbench_context.h"

class QAction;
class QMenu;

namespace tunebench::ui {

class AnalysisController : public QObject {
  Q_OBJECT
 public:
  using TrialLogProvider = std::function<std::optional<protocol::TrialLog>(int row)>;

  explicit AnalysisController(const WorkbenchContext& context, QObject* parent = nullptr);

  // Compare, Sweep, Investigate and Find the fastest (menuAnalysis); the window places it.
  QMenu* menu() const { return m_menu; }
  // Investigate… (also in the trials table's context menu).
  QAction* investigateAction() const { return m_investigate; }

  void setTrialLogProvider(TrialLogProvider provider);
  // The log of a row of the trials table, from the provider (the What-if panel reads it too).
  std::optional<protocol::TrialLog> logOfRow(int row) const { return m_provider(row); }
  // The live-cache provider (so a store provider can fall back to it).
  std::optional<protocol::TrialLog> cachedLog(int row) const;

  // Opens a comparison of these rows of the trials table. Returns it at once when every log is at
  // hand; nullptr while stored trials load (it then opens by itself: lastComparison()) or when no
  // row has a log (a status message says so).
  ComparisonWindow* compareRows(const QList<int>& rows);
  // Opens a comparison of the given logs (names per log), wired to queue follow-ups.
  // `fromSession`: the logs came from someone else's session file (follow-ups are previewed).
  ComparisonWindow* openComparison(std::vector<protocol::TrialLog> logs, const QStringList& names,
                                   bool fromSession = false);
  SweepDialog* openSweepDialog();
  // "Investigate…" on a row of the trials table (a stored trial): the plan view with its budget
  // (nothing runs until Start), its trials queued through the window's TrialLauncher and tagged
  // with the plan. nullptr (and a status message) when the row is not a stored trial.
  InvestigateWindow* investigateRow(int row);
  InvestigateWindow* lastInvestigation() const { return m_investigation; }
  // "Find the fastest…" around the form's trial (the session must be a file).
  AutotuneDialog* openAutotuneDialog();
  ComparisonWindow* lastComparison() const { return m_last; }

 public slots:
  void compareSelected();
  void investigateSelected();

 signals:
  void statusMessage(const QString& text, int timeoutMs);
  // The comparison window asked for a report of these stored trials (the window's File > Export report… path).
  void exportReportRequested(const QStringList& trialIds);

 private:
  void queueFollowUp(const config::TrialConfig& config, const QString& suggestion, bool fromSession);
  void showSweep(const QStringList& ids, const std::vector<std::string>& keys);
  // How a plan (investigation or search) runs its trials here: through the TrialLauncher, tagged
  // with the plan; stopped through the live trials' books.
  // `fromSession`: the plan's trials repeat a config from someone else's file (launch preview).
  PlanRun::Hooks planHooks(const QString& what, bool fromSession);

  WorkbenchContext m_context;
  TrialLogProvider m_provider;
  QMenu* m_menu = nullptr;
  QAction* m_investigate = nullptr;
  QPointer<ComparisonWindow> m_last;
  QPointer<SweepDialog> m_sweep;
  QPointer<InvestigateWindow> m_investigation;
};

}  // namespace tunebench::ui

// AnalysisController: the main window's "Analysis" menu (issue 7). It turns selected rows of the
// trials table into TrialLogs through a provider, opens a ComparisonWindow on them, queues the
// follow-up trials its suggestion buttons ask for, and runs the sweep dialog: plan -> queue ->
// progress -> comparison of the sweep when its last trial finished.
//
// Where logs come from is the provider's business: by default the events this window received
// (MainWindow::trialLogs(), live runs and replays); the session store (issue 6) sets a provider
// that also loads trials of an opened session (SessionStore::load_trial).
#pragma once

#include <functional>
#include <optional>

#include <QList>
#include <QObject>
#include <QPointer>

#include "core/config/trial_config.h"
#include "core/protocol/trial_log.h"
#include "ui/windows/comparison_window.h"  // QPointer needs the complete types
#include "ui/windows/sweep_dialog.h"

namespace tunebench::ui {

class MainWindow;

class AnalysisController : public QObject {
  Q_OBJECT
 public:
  using TrialLogProvider = std::function<std::optional<protocol::TrialLog>(int row)>;

  explicit AnalysisController(MainWindow* window);

  void setTrialLogProvider(TrialLogProvider provider);
  // The log of a row of the trials table, from the provider (the What-if panel reads it too).
  std::optional<protocol::TrialLog> logOfRow(int row) const { return m_provider(row); }
  // The live-cache provider (so a store provider can fall back to it).
  std::optional<protocol::TrialLog> cachedLog(int row) const;

  // Opens a comparison of these rows of the trials table; nullptr (with a status message) when
  // fewer than one row has a log.
  ComparisonWindow* compareRows(const QList<int>& rows);
  // Opens a comparison of the given logs (names per log), wired to queue follow-ups.
  ComparisonWindow* openComparison(std::vector<protocol::TrialLog> logs, const QStringList& names);
  SweepDialog* openSweepDialog();
  ComparisonWindow* lastComparison() const { return m_last; }

 public slots:
  void compareSelected();

 private:
  void queueFollowUp(const config::TrialConfig& config, const QString& suggestion);
  void showSweep(const QStringList& ids, const std::vector<std::string>& keys);

  MainWindow* m_window;
  TrialLogProvider m_provider;
  QPointer<ComparisonWindow> m_last;
  QPointer<SweepDialog> m_sweep;
};

}  // namespace tunebench::ui

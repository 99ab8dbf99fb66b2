// TrialsPanel: the Trials dock's content. The trials table (every row of the TrialsModel; the
// columns refit as rows arrive, values grow and the table is resized, the reason readable without
// scrolling sideways), and "Group by" a knob, which shows the same
// trials as a tree (TrialGroupsView) sharing the table's selection. Clicking a row or a tree
// item asks for that trial to be shown (trialActivated), also when its row is current already.
#pragma once

#include <QList>
#include <QStringList>
#include <QWidget>

class QAction;
class QComboBox;
class QItemSelectionModel;
class QMenu;
class QStackedWidget;
class QTableView;
class QTimer;

namespace tunebench::ui {

class TrialGroupsView;
class TrialsModel;

class TrialsPanel : public QWidget {
  Q_OBJECT
 public:
  explicit TrialsPanel(TrialsModel* trials, QWidget* parent = nullptr);

  QTableView* table() const { return m_table; }
  TrialGroupsView* groupsView() const { return m_groups; }
  QComboBox* groupBy() const { return m_groupBy; }
  QItemSelectionModel* selection() const;
  // The rows held selected (several: a comparison's).
  int selectedCount() const;

  // Makes the trial's row the current and only selected one, unless the user holds several rows
  // (for a comparison) that must not be taken away. False when it did not (or has no row).
  bool makeCurrent(const QString& recordId);
  // Selects rows (indices as text, from 0; others ignored), the last one current. Returns the
  // last one's record id, empty when no row was valid.
  QString selectRows(const QStringList& rows);
  // The menu the table's right click opens; `shortcuts` work while the table has the focus.
  void setContextMenu(QMenu* menu, const QList<QAction*>& shortcuts);

 signals:
  void trialActivated(const QString& recordId);

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  // The columns: fitted to their contents, the name elided before the reason is.
  void fitColumns();

  TrialsModel* m_trials;
  QTableView* m_table = nullptr;
  TrialGroupsView* m_groups = nullptr;
  QComboBox* m_groupBy = nullptr;
  QStackedWidget* m_stack = nullptr;
  QMenu* m_contextMenu = nullptr;
  QTimer* m_refit = nullptr;  // refits the columns soon (coalesced)
};

}  // namespace tunebench::ui

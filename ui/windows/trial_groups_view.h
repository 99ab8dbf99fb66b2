// TrialGroupsView: the trials grouped by a knob (TrialGroupsModel) as a tree. Its selection is the
// trials table's: selecting trials here selects their rows there, so Compare, Export and the
// context menu work the same in either view.
#pragma once

#include <QTreeView>

class QItemSelectionModel;

namespace tunebench::ui {

class TrialGroupsModel;
class TrialsModel;

class TrialGroupsView : public QTreeView {
  Q_OBJECT
 public:
  TrialGroupsView(TrialsModel* trials, QItemSelectionModel* tableSelection, QWidget* parent = nullptr);

  void setGroupKey(const QString& key);
  TrialGroupsModel* groupsModel() const { return m_groups; }

 signals:
  void trialActivated(const QString& recordId);

 private:
  void toTable();
  void fromTable();

  TrialsModel* m_trials;
  TrialGroupsModel* m_groups;
  QItemSelectionModel* m_table;
  bool m_syncing = false;
};

}  // namespace tunebench::ui

#include "ui/windows/trial_groups_view.h"

#include <QHeaderView>
#include <QItemSelectionModel>

#include "ui/models/trial_groups_model.h"
#include "ui/models/trials_model.h"

namespace tunebench::ui {

TrialGroupsView::TrialGroupsView(TrialsModel* trials, QItemSelectionModel* tableSelection, QWidget* parent)
    : QTreeView(parent), m_trials(trials), m_groups(new TrialGroupsModel(trials, this)), m_table(tableSelection) {
  setObjectName(QStringLiteral("trialGroupsView"));
  setModel(m_groups);
  setSelectionMode(QAbstractItemView::ExtendedSelection);
  setSelectionBehavior(QAbstractItemView::SelectRows);
  setAlternatingRowColors(true);
  setUniformRowHeights(true);
  header()->setSectionResizeMode(QHeaderView::ResizeToContents);
  header()->setStretchLastSection(true);
  connect(m_groups, &QAbstractItemModel::modelReset, this, [this] {
    expandAll();
    fromTable();
  });
  connect(selectionModel(), &QItemSelectionModel::selectionChanged, this, &TrialGroupsView::toTable);
  connect(m_table, &QItemSelectionModel::selectionChanged, this, &TrialGroupsView::fromTable);
  connect(this, &QTreeView::clicked, this, [this](const QModelIndex& index) {
    const int row = m_groups->sourceRow(index);
    if (row >= 0) emit trialActivated(m_trials->record(row).id);
  });
}

void TrialGroupsView::setGroupKey(const QString& key) {
  m_groups->setGroupKey(key);
  expandAll();
}

void TrialGroupsView::toTable() {
  if (m_syncing) return;
  m_syncing = true;
  QItemSelection selection;
  for (const QModelIndex& index : selectionModel()->selectedRows()) {
    const int row = m_groups->sourceRow(index);
    if (row >= 0) selection.select(m_trials->index(row, 0), m_trials->index(row, TrialsModel::ColumnCount - 1));
  }
  m_table->select(selection, QItemSelectionModel::ClearAndSelect);
  m_syncing = false;
}

void TrialGroupsView::fromTable() {
  if (m_syncing) return;
  m_syncing = true;
  QItemSelection selection;
  for (const QModelIndex& index : m_table->selectedRows()) {
    const QModelIndex leaf = m_groups->indexOfSourceRow(index.row());
    if (leaf.isValid()) selection.select(leaf, leaf.siblingAtColumn(TrialsModel::ColumnCount - 1));
  }
  selectionModel()->select(selection, QItemSelectionModel::ClearAndSelect);
  m_syncing = false;
}

}  // namespace tunebench::ui

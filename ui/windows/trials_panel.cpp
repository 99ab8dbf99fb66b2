#include "ui/windows/trials_panel.h"

#include <algorithm>

#include <QComboBox>
#include <QEvent>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QMenu>
#include <QStackedWidget>
#include <QTableView>
#include <QTimer>
#include <QVBoxLayout>

#include "core/config/trial_config.h"
#include "ui/models/trials_model.h"
#include "ui/windows/trial_groups_view.h"

namespace tunebench::ui {

TrialsPanel::TrialsPanel(TrialsModel* trials, QWidget* parent) : QWidget(parent), m_trials(trials) {
  setObjectName(QStringLiteral("trialsPanel"));
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
  m_refit = new QTimer(this);
  m_refit->setSingleShot(true);
  m_refit->setInterval(100);
  connect(m_refit, &QTimer::timeout, this, &TrialsPanel::fitColumns);
  auto refitSoon = [this] {
    if (!m_refit->isActive()) m_refit->start();
  };
  connect(m_trials, &QAbstractItemModel::rowsInserted, m_refit, refitSoon);
  connect(m_trials, &QAbstractItemModel::dataChanged, m_refit, refitSoon);
  connect(m_trials, &QAbstractItemModel::modelReset, m_refit, refitSoon);
  m_table->viewport()->installEventFilter(this);
  m_table->verticalHeader()->setVisible(false);
  m_table->setAlternatingRowColors(true);
  m_table->setWordWrap(false);
  m_table->setToolTip(
      QStringLiteral("Click a trial to see its timeline and plots; select several to compare them (Ctrl+K)"));
  // Clicking the row that is already current shows it again (e.g. back from a stored trial).
  connect(m_table, &QTableView::clicked, this,
          [this](const QModelIndex& i) { emit trialActivated(i.data(TrialsModel::TrialIdRole).toString()); });

  // Group by a knob (W&B's run grouping): the same trials as a tree, selection shared.
  m_groups = new TrialGroupsView(m_trials, m_table->selectionModel());
  m_groupBy = new QComboBox;
  m_groupBy->setObjectName(QStringLiteral("groupBy"));
  m_groupBy->addItem(QStringLiteral("no grouping"), QString());
  for (const config::KnobInfo& k : config::knobs())
    if (k.key != "name" && k.type != config::KnobType::Map)
      m_groupBy->addItem(QString::fromStdString(k.label), QString::fromStdString(k.key));
  m_groupBy->setToolTip(
      QStringLiteral("Group the trials by a knob: one group per value, with the group's best and median figures"));
  m_stack = new QStackedWidget;
  m_stack->addWidget(m_table);
  m_stack->addWidget(m_groups);
  connect(m_groupBy, &QComboBox::currentIndexChanged, this, [this](int) {
    const QString key = m_groupBy->currentData().toString();
    m_groups->setGroupKey(key);
    m_stack->setCurrentIndex(key.isEmpty() ? 0 : 1);
  });
  connect(m_groups, &TrialGroupsView::trialActivated, this, &TrialsPanel::trialActivated);

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(2);
  auto* bar = new QHBoxLayout;
  bar->addWidget(new QLabel(QStringLiteral("Group by:")));
  bar->addWidget(m_groupBy);
  bar->addStretch(1);
  layout->addLayout(bar);
  layout->addWidget(m_stack, 1);
}

QItemSelectionModel* TrialsPanel::selection() const { return m_table->selectionModel(); }

int TrialsPanel::selectedCount() const { return int(selection()->selectedRows().size()); }

bool TrialsPanel::makeCurrent(const QString& recordId) {
  const int row = m_trials->rowOf(recordId);
  if (row < 0 || selectedCount() > 1) return false;
  selection()->setCurrentIndex(m_trials->index(row, 0),
                               QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
  return true;
}

QString TrialsPanel::selectRows(const QStringList& rows) {
  QItemSelection chosen;
  int last = -1;
  for (const QString& r : rows) {
    bool ok = false;
    const int row = r.trimmed().toInt(&ok);
    if (!ok || row < 0 || row >= m_trials->rowCount()) continue;
    chosen.select(m_trials->index(row, 0), m_trials->index(row, TrialsModel::ColumnCount - 1));
    last = row;
  }
  if (last < 0) return {};
  selection()->setCurrentIndex(m_trials->index(last, 0), QItemSelectionModel::NoUpdate);
  selection()->select(chosen, QItemSelectionModel::ClearAndSelect);
  return m_trials->record(last).id;
}

void TrialsPanel::setContextMenu(QMenu* menu, const QList<QAction*>& shortcuts) {
  m_contextMenu = menu;
  m_table->addActions(shortcuts);  // F2 and Del work in the table
  m_table->setContextMenuPolicy(Qt::CustomContextMenu);
  connect(m_table, &QWidget::customContextMenuRequested, this, [this](const QPoint& pos) {
    if (m_contextMenu) m_contextMenu->popup(m_table->viewport()->mapToGlobal(pos));
  });
}

void TrialsPanel::fitColumns() {
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

bool TrialsPanel::eventFilter(QObject* watched, QEvent* event) {
  if (watched == m_table->viewport() && event->type() == QEvent::Resize && !m_refit->isActive()) m_refit->start();
  return QWidget::eventFilter(watched, event);
}

}  // namespace tunebench::ui

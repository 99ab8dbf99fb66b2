#include "ui/windows/sweep_dialog.h"

#include <algorithm>

#include <QComboBox>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QTableWidget>
#include <QVBoxLayout>

namespace tunebench::ui {

std::vector<std::string> split_values(const QString& text) {
  std::vector<std::string> out;
  for (const QString& part : text.split(QLatin1Char(',')))
    if (!part.trimmed().isEmpty()) out.push_back(part.trimmed().toStdString());
  return out;
}

SweepDialog::SweepDialog(const config::TrialConfig& base, QWidget* parent) : QDialog(parent), m_base(base) {
  setObjectName(QStringLiteral("sweepDialog"));
  setWindowTitle(QStringLiteral("Sweep"));
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(
      new QLabel(QStringLiteral("Every combination of the values below runs as a trial based on <b>%1</b> "
                                "(the form's trial), each repeated to measure the noise.")
                     .arg(QString::fromStdString(base.name).toHtmlEscaped())));
  m_axes = new QTableWidget(0, 2);
  m_axes->setObjectName(QStringLiteral("sweepAxes"));
  m_axes->setHorizontalHeaderLabels({QStringLiteral("knob"), QStringLiteral("values (comma-separated)")});
  m_axes->horizontalHeader()->setStretchLastSection(true);
  m_axes->horizontalHeader()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
  m_axes->verticalHeader()->setVisible(false);
  layout->addWidget(m_axes, 1);
  auto* rowButtons = new QHBoxLayout;
  auto* add = new QPushButton(QStringLiteral("Add knob"));
  auto* remove = new QPushButton(QStringLiteral("Remove knob"));
  connect(add, &QPushButton::clicked, this, [this] { addAxisRow("grad_accum", QString()); });
  connect(remove, &QPushButton::clicked, this, [this] {
    m_axes->removeRow(m_axes->currentRow() >= 0 ? m_axes->currentRow() : m_axes->rowCount() - 1);
    updatePlan();
  });
  rowButtons->addWidget(add);
  rowButtons->addWidget(remove);
  rowButtons->addStretch(1);
  auto* form = new QFormLayout;
  m_repeats = new QSpinBox;
  m_repeats->setObjectName(QStringLiteral("sweepRepeats"));
  m_repeats->setRange(1, 20);
  m_repeats->setValue(2);
  m_repeats->setToolTip(
      QStringLiteral("Each point runs this many times; their steps are pooled, so the spread shows the noise"));
  connect(m_repeats, &QSpinBox::valueChanged, this, &SweepDialog::updatePlan);
  form->addRow(QStringLiteral("Repeats per point:"), m_repeats);
  rowButtons->addLayout(form);
  layout->addLayout(rowButtons);

  m_summary = new QLabel;
  m_summary->setObjectName(QStringLiteral("sweepSummary"));
  m_summary->setWordWrap(true);
  layout->addWidget(m_summary);
  m_invalid = new QListWidget;
  m_invalid->setObjectName(QStringLiteral("sweepInvalid"));
  m_invalid->setMaximumHeight(110);
  layout->addWidget(m_invalid);

  auto* progressRow = new QHBoxLayout;
  m_progress = new QProgressBar;
  m_progress->setObjectName(QStringLiteral("sweepProgress"));
  m_progressLabel = new QLabel(QStringLiteral("not queued yet"));
  progressRow->addWidget(m_progressLabel);
  progressRow->addWidget(m_progress, 1);
  layout->addLayout(progressRow);

  auto* box = new QDialogButtonBox;
  m_queue = box->addButton(QStringLiteral("Queue"), QDialogButtonBox::ActionRole);
  m_queue->setObjectName(QStringLiteral("sweepQueue"));
  box->addButton(QDialogButtonBox::Close);
  // No default button anywhere: Return in a values cell must not start (or change) a sweep.
  for (QPushButton* b : {m_queue, add, remove}) {
    b->setAutoDefault(false);
    b->setDefault(false);
  }
  for (QAbstractButton* b : box->buttons())
    if (auto* p = qobject_cast<QPushButton*>(b)) p->setAutoDefault(false);
  connect(box, &QDialogButtonBox::rejected, this, &QDialog::reject);
  connect(m_queue, &QPushButton::clicked, this, [this] {
    const analysis::SweepPlan p = plan();
    if (p.trials.empty() || !p.spec_problems.empty()) return;
    std::vector<config::TrialConfig> configs;
    for (const auto& point : p.trials) configs.push_back(point.config);
    m_queuedKeys = keys();
    emit queueRequested(configs);
  });
  layout->addWidget(box);

  addAxisRow("grad_accum", QStringLiteral("1, 2, 4"));
  resize(640, 460);
}

void SweepDialog::addAxisRow(const std::string& key, const QString& values) {
  const int row = m_axes->rowCount();
  m_axes->insertRow(row);
  auto* knob = new QComboBox;
  for (const config::KnobInfo& k : config::knobs()) {
    if (k.type == config::KnobType::Map || k.key == "name") continue;  // nccl_env is not a list of values
    knob->addItem(QStringLiteral("%1 (%2)").arg(QString::fromStdString(k.label), QString::fromStdString(k.key)),
                  QString::fromStdString(k.key));
    knob->setItemData(knob->count() - 1, QString::fromStdString(k.help), Qt::ToolTipRole);
  }
  knob->setCurrentIndex(std::max(0, knob->findData(QString::fromStdString(key))));
  auto* edit = new QLineEdit(values);
  edit->setPlaceholderText(QStringLiteral("e.g. 1, 2, 4"));
  connect(knob, &QComboBox::currentIndexChanged, this, &SweepDialog::updatePlan);
  connect(edit, &QLineEdit::textChanged, this, &SweepDialog::updatePlan);
  m_axes->setCellWidget(row, 0, knob);
  m_axes->setCellWidget(row, 1, edit);
  updatePlan();
}

void SweepDialog::setAxes(const std::vector<analysis::SweepAxis>& axes) {
  m_axes->setRowCount(0);
  for (const auto& a : axes) {
    QStringList values;
    for (const auto& v : a.values) values << QString::fromStdString(v);
    addAxisRow(a.key, values.join(QStringLiteral(", ")));
  }
  updatePlan();
}

void SweepDialog::setRepeats(int repeats) { m_repeats->setValue(repeats); }

std::vector<std::string> SweepDialog::keys() const {
  std::vector<std::string> out;
  for (int r = 0; r < m_axes->rowCount(); ++r)
    out.push_back(static_cast<QComboBox*>(m_axes->cellWidget(r, 0))->currentData().toString().toStdString());
  return out;
}

analysis::SweepPlan SweepDialog::plan() const {
  analysis::SweepSpec spec;
  spec.base = m_base;
  spec.repeats = m_repeats->value();
  const std::vector<std::string> k = keys();
  for (int r = 0; r < m_axes->rowCount(); ++r)
    spec.axes.push_back({k[size_t(r)], split_values(static_cast<QLineEdit*>(m_axes->cellWidget(r, 1))->text())});
  return analysis::plan_sweep(spec);
}

void SweepDialog::updatePlan() {
  if (!m_summary) return;  // during construction
  const analysis::SweepPlan p = plan();
  m_invalid->clear();
  for (const auto& problem : p.spec_problems)
    m_invalid->addItem(
        QStringLiteral("%1: %2").arg(QString::fromStdString(problem.key), QString::fromStdString(problem.message)));
  const std::vector<std::string> k = keys();
  for (const auto& bad : p.invalid) {
    QStringList point;
    for (size_t i = 0; i < bad.values.size() && i < k.size(); ++i)
      point << QStringLiteral("%1=%2").arg(QString::fromStdString(k[i]), QString::fromStdString(bad.values[i]));
    m_invalid->addItem(
        QStringLiteral("not run: %1 — %2")
            .arg(point.join(QStringLiteral(", ")), QString::fromStdString(config::describe(bad.problems))));
  }
  const size_t valid = p.grid_size - p.invalid.size();
  m_summary->setText(
      p.spec_problems.empty()
          ? QStringLiteral("<b>%1 trials</b>: %2 of %3 grid points valid × %4 repeats%5")
                .arg(p.trials.size())
                .arg(valid)
                .arg(p.grid_size)
                .arg(m_repeats->value())
                .arg(p.invalid.empty()
                         ? QString()
                         : QStringLiteral("; %1 invalid combination(s) listed below, not run").arg(p.invalid.size()))
          : QStringLiteral("<b>The sweep is incomplete</b>: see below."));
  m_invalid->setVisible(m_invalid->count() > 0);
  m_queue->setText(QStringLiteral("Queue %1 trials").arg(p.trials.size()));
  m_queue->setEnabled(!p.trials.empty() && p.spec_problems.empty() && !m_running);
}

void SweepDialog::setQueued(const QStringList& trialIds) {
  m_ids = trialIds;
  m_done.clear();
  m_running = !m_ids.isEmpty();
  m_progress->setRange(0, std::max(1, int(m_ids.size())));
  m_progress->setValue(0);
  m_progressLabel->setText(progressText());
  updatePlan();  // Queue waits while this sweep's trials run: its progress refers to them
}

void SweepDialog::setRefused(const QString& message) {
  m_running = false;
  m_progressLabel->setText(message);
  updatePlan();
}

QString SweepDialog::progressText() const {
  if (m_ids.isEmpty()) return QStringLiteral("not queued yet");
  return m_done.size() == m_ids.size()
             ? QStringLiteral("sweep done: %1 of %1 trials").arg(m_ids.size())
             : QStringLiteral("sweep: %1 of %2 trials done").arg(m_done.size()).arg(m_ids.size());
}

void SweepDialog::onTrialFinished(const TrialOutcome& outcome) {
  if (!m_ids.contains(outcome.trial_id) || m_done.contains(outcome.trial_id)) return;
  m_done << outcome.trial_id;
  m_progress->setValue(int(m_done.size()));
  m_progressLabel->setText(progressText());
  if (m_done.size() == m_ids.size()) {
    m_running = false;
    updatePlan();
    emit sweepFinished(m_ids, m_queuedKeys);
  }
}

}  // namespace tunebench::ui

#include "ui/windows/link_probe_dialog.h"

#include <QDialogButtonBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QHeaderView>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QTableWidget>
#include <QVBoxLayout>

#include "core/predict/render.h"
#include "ui/models/status_colors.h"

namespace tunebench::ui {

LinkProbeDialog::LinkProbeDialog(const QString& what, const launch::LinkProbeRange& defaults, const QString& problem,
                                 QWidget* parent)
    : QDialog(parent), m_canMeasure(problem.isEmpty()) {
  setObjectName(QStringLiteral("linkProbeDialog"));
  setWindowTitle(QStringLiteral("Measure the link"));
  auto* layout = new QVBoxLayout(this);
  auto* intro = new QLabel(what, this);
  intro->setObjectName(QStringLiteral("linkProbeWhat"));
  intro->setWordWrap(true);
  layout->addWidget(intro);

  auto* form = new QFormLayout;
  auto spin = [this](double value, const char* name) {
    auto* s = new QDoubleSpinBox(this);
    s->setObjectName(QString::fromLatin1(name));
    s->setDecimals(2);
    s->setRange(0.01, 65536);  // the worker's bounds (0 < min <= max <= 65536 MiB)
    s->setSuffix(QStringLiteral(" MiB"));
    s->setValue(value);
    return s;
  };
  m_min = spin(defaults.min_mb, "probeMinMb");
  m_max = spin(defaults.max_mb, "probeMaxMb");
  m_min->setToolTip(QStringLiteral("The smallest all-reduce; the sizes double from here up to the largest"));
  m_max->setToolTip(QStringLiteral("The largest all-reduce: around the size of your gradient buckets or more"));
  form->addRow(QStringLiteral("Smallest message"), m_min);
  form->addRow(QStringLiteral("Largest message"), m_max);
  layout->addLayout(form);

  m_progress = new QProgressBar(this);
  m_progress->setObjectName(QStringLiteral("probeProgress"));
  m_progress->setVisible(false);
  layout->addWidget(m_progress);
  m_points = new QTableWidget(0, 3, this);
  m_points->setObjectName(QStringLiteral("probePoints"));
  m_points->setHorizontalHeaderLabels(
      {QStringLiteral("Size"), QStringLiteral("Time"), QStringLiteral("Bus bandwidth")});
  m_points->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
  m_points->verticalHeader()->setVisible(false);
  m_points->setEditTriggers(QAbstractItemView::NoEditTriggers);
  m_points->setMinimumHeight(160);
  m_points->setVisible(false);
  layout->addWidget(m_points);
  m_status = new QLabel(this);
  m_status->setObjectName(QStringLiteral("probeStatus"));
  m_status->setWordWrap(true);
  m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);
  layout->addWidget(m_status);

  auto* buttons = new QDialogButtonBox(this);
  m_measure = buttons->addButton(QStringLiteral("Measure"), QDialogButtonBox::ActionRole);
  m_measure->setObjectName(QStringLiteral("probeMeasure"));
  m_cancel = buttons->addButton(QStringLiteral("Close"), QDialogButtonBox::RejectRole);
  m_cancel->setObjectName(QStringLiteral("probeCancel"));
  connect(m_measure, &QPushButton::clicked, this, [this] {
    if (m_min->value() > m_max->value()) {
      m_status->setText(QStringLiteral("The smallest message must not be larger than the largest."));
      return;
    }
    emit measureRequested(range());
  });
  connect(m_cancel, &QPushButton::clicked, this, &LinkProbeDialog::reject);
  layout->addWidget(buttons);
  resize(520, 420);
  setState(State::Ready, problem);
}

launch::LinkProbeRange LinkProbeDialog::range() const { return {m_min->value(), m_max->value()}; }

QString LinkProbeDialog::statusText() const { return m_status->text(); }

void LinkProbeDialog::setState(State state, const QString& text) {
  m_state = state;
  const bool busy = state == State::Waiting || state == State::Running;
  m_measure->setEnabled(!busy && m_canMeasure);
  m_measure->setText(state == State::Ready ? QStringLiteral("Measure") : QStringLiteral("Measure again"));
  m_cancel->setText(busy ? QStringLiteral("Cancel") : QStringLiteral("Close"));
  m_min->setEnabled(!busy);
  m_max->setEnabled(!busy);
  m_status->setStyleSheet(state == State::Failed || (state == State::Ready && !m_canMeasure)
                              ? QStringLiteral("color: %1;").arg(bad_color().name())
                              : QString());
  m_status->setText(text);
}

void LinkProbeDialog::setWaiting(const QString& text) {
  m_points->setRowCount(0);
  setState(State::Waiting, text);
}

void LinkProbeDialog::setRunning(int sizes) {
  m_points->setRowCount(0);
  m_points->setVisible(true);
  m_progress->setVisible(true);
  m_progress->setRange(0, std::max(1, sizes));
  m_progress->setValue(0);
  setState(State::Running, QStringLiteral("Starting the ranks…"));
}

void LinkProbeDialog::setProgress(int done, int total, double elapsedS) {
  m_progress->setRange(0, std::max(1, total));
  m_progress->setValue(std::min(done, total));
  if (m_state == State::Running)
    m_status->setText(QStringLiteral("Measured %1 of %2 sizes (%3 s)").arg(done).arg(total).arg(elapsedS, 0, 'f', 0));
}

void LinkProbeDialog::addPoint(const protocol::LinkProbe& p) {
  const int row = m_points->rowCount();
  m_points->insertRow(row);
  m_points->setItem(row, 0, new QTableWidgetItem(QString::fromStdString(predict::format_bytes(double(p.bytes)))));
  m_points->setItem(row, 1, new QTableWidgetItem(p.time_us < 1000 ? QStringLiteral("%1 µs").arg(p.time_us, 0, 'f', 0)
                                                                    : QStringLiteral("%1 ms").arg(p.time_us / 1000, 0, 'f', 2)));
  m_points->setItem(row, 2, new QTableWidgetItem(QStringLiteral("%1 GB/s").arg(p.busbw_gbps, 0, 'f', p.busbw_gbps < 10 ? 2 : 1)));
  m_points->scrollToBottom();
}

void LinkProbeDialog::setStored(const QString& text) {
  m_progress->setValue(m_progress->maximum());
  setState(State::Stored, text);
}

void LinkProbeDialog::setFailed(const QString& text) { setState(State::Failed, text); }

void LinkProbeDialog::setCancelled(const QString& text) { setState(State::Cancelled, text); }

void LinkProbeDialog::reject() {
  if (m_state == State::Waiting || m_state == State::Running) {
    emit cancelRequested();  // the controller answers with setCancelled (or the probe's end)
    if (sender() == m_cancel) return;  // Cancel keeps the dialog: its outcome is shown there
  }
  QDialog::reject();
}

}  // namespace tunebench::ui

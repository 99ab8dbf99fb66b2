#include "ui/windows/target_picker.h"

#include <QComboBox>
#include <QGridLayout>
#include <QLabel>
#include <QSignalBlocker>
#include <QSpinBox>

#include "ui/windows/wheel_guard.h"

namespace tunebench::ui {

TargetPicker::TargetPicker(const QString& prefix, QWidget* parent) : QWidget(parent) {
  setObjectName(prefix + QStringLiteral("Target"));
  m_gpu = new QComboBox(this);
  m_gpu->setObjectName(prefix + QStringLiteral("Gpu"));
  for (const auto& g : hardware::catalogue().gpus)
    m_gpu->addItem(QString::fromStdString(g.name), QString::fromStdString(g.id));
  m_gpu->setToolTip(QStringLiteral("The GPU model to predict for (the hardware catalogue; tunebench-cli predict --gpu)"));
  m_count = new QSpinBox(this);
  m_count->setObjectName(prefix + QStringLiteral("GpuCount"));
  m_count->setRange(1, 1024);
  m_count->setPrefix(QStringLiteral("× "));
  m_count->setToolTip(QStringLiteral("How many GPUs: the world size (--gpus)"));
  m_link = new QComboBox(this);
  m_link->setObjectName(prefix + QStringLiteral("Link"));
  m_link->addItem(QStringLiteral("link: as measured here, else what the GPU implies"), QString());
  for (const auto& l : hardware::catalogue().links)
    m_link->addItem(QString::fromStdString(l.name), QString::fromStdString(l.id));
  m_link->setToolTip(QStringLiteral("The interconnect between the GPUs (--link)"));
  m_link->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
  m_link->setMinimumContentsLength(12);
  m_gpu->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
  m_gpu->setMinimumContentsLength(12);

  // Two rows: the GPUs and their count, then the link (the dock is narrow).
  auto* layout = new QGridLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setHorizontalSpacing(4);
  layout->setVerticalSpacing(2);
  layout->addWidget(m_gpu, 0, 0);
  layout->addWidget(m_count, 0, 1);
  layout->addWidget(m_link, 1, 0, 1, 2);
  layout->setColumnStretch(0, 1);
  for (QComboBox* box : {m_gpu, m_link}) connect(box, &QComboBox::currentIndexChanged, this, &TargetPicker::changed);
  connect(m_count, &QSpinBox::valueChanged, this, &TargetPicker::changed);
  guard_wheel(this);
}

void TargetPicker::showFullNames() {
  for (QComboBox* box : {m_gpu, m_link}) box->setSizeAdjustPolicy(QComboBox::AdjustToContents);
}

predict::Target TargetPicker::target() const {
  predict::Target t;
  t.gpu = m_gpu->currentData().toString().toStdString();
  t.gpus = m_count->value();
  t.link = m_link->currentData().toString().toStdString();
  return t;
}

void TargetPicker::setTarget(const predict::Target& t) {
  const QSignalBlocker a(m_gpu), b(m_count), c(m_link);
  if (const int i = m_gpu->findData(QString::fromStdString(t.gpu)); i >= 0) m_gpu->setCurrentIndex(i);
  if (t.gpus > 0) m_count->setValue(t.gpus);
  if (const int i = m_link->findData(QString::fromStdString(t.link)); i >= 0) m_link->setCurrentIndex(i);
}

}  // namespace tunebench::ui

#include "ui/windows/prediction_panel.h"

#include <unistd.h>

#include <QLabel>
#include <QLocale>
#include <QProgressBar>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>

#include "core/predict/render.h"

namespace tunebench::ui {

namespace {

QString bytes(double b) { return QString::fromStdString(predict::format_bytes(b)); }

QString ms(double v) { return QString::number(v, 'f', v < 10 ? 1 : 0) + QStringLiteral(" ms"); }

QString thousands(double v) { return QLocale(QLocale::English).toString(qint64(v + 0.5)); }

bool uses_gpu(const config::TrialConfig& c, const DeviceInventory& d) {
  return c.device == config::Device::Cuda || (c.device == config::Device::Auto && d.hasGpu());
}

}  // namespace

PredictionPanel::PredictionPanel(QWidget* parent) : QWidget(parent) {
  setObjectName(QStringLiteral("predictionPanel"));
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(6, 6, 6, 6);
  m_memory = new QLabel(this);
  m_memory->setObjectName(QStringLiteral("predictedMemory"));
  m_memory->setWordWrap(true);
  m_memoryBar = new QProgressBar(this);
  m_memoryBar->setObjectName(QStringLiteral("predictedMemoryBar"));
  m_memoryBar->setRange(0, 1000);
  m_memoryBar->setTextVisible(false);
  m_memoryBar->setMaximumHeight(8);
  m_warning = new QLabel(this);
  m_warning->setObjectName(QStringLiteral("predictedWarning"));
  m_warning->setWordWrap(true);
  m_warning->setStyleSheet(QStringLiteral("color: #c62828; font-weight: bold;"));
  m_step = new QLabel(this);
  m_step->setObjectName(QStringLiteral("predictedStep"));
  m_step->setWordWrap(true);
  m_scaling = new QLabel(this);
  m_scaling->setObjectName(QStringLiteral("predictedScaling"));
  m_scaling->setWordWrap(true);
  m_link = new QLabel(this);
  m_link->setObjectName(QStringLiteral("predictedLink"));
  m_link->setWordWrap(true);
  m_basis = new QLabel(this);
  m_basis->setObjectName(QStringLiteral("predictionBasis"));
  m_basis->setWordWrap(true);
  m_basis->setStyleSheet(QStringLiteral("color: palette(mid);"));
  for (QWidget* w :
       {static_cast<QWidget*>(m_memory), static_cast<QWidget*>(m_memoryBar), static_cast<QWidget*>(m_warning),
        static_cast<QWidget*>(m_step), static_cast<QWidget*>(m_scaling), static_cast<QWidget*>(m_link)})
    layout->addWidget(w);
  m_measureLink = new QToolButton(this);
  m_measureLink->setObjectName(QStringLiteral("measureLinkButton"));
  m_measureLink->setVisible(false);
  layout->addWidget(m_measureLink, 0, Qt::AlignLeft);
  layout->addWidget(m_basis);
  layout->addStretch(1);
}

void PredictionPanel::setEvidence(std::vector<const predict::MeasuredTrial*> evidence) {
  m_evidence = std::move(evidence);
}

int64_t PredictionPanel::hostMemoryBytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? int64_t(pages) * page : 0;
}

predict::Scenario PredictionPanel::scenarioFor(const config::TrialConfig& c, const DeviceInventory& d) {
  predict::Scenario s;
  s.config = c;
  if (uses_gpu(c, d) && d.hasGpu()) {
    s.gpu = d.gpus.front().name.toStdString();
    s.device_memory_bytes = d.gpus.front().memory_bytes;
  } else if (!uses_gpu(c, d)) {
    s.config.device = config::Device::Cpu;
    s.device_memory_bytes = hostMemoryBytes();
  }
  return s;
}

void PredictionPanel::showPrediction(const config::TrialConfig& config, const DeviceInventory& devices) {
  predict::Scenario scenario = scenarioFor(config, devices);
  if (scenario.config.device == config::Device::Cpu && m_hostMemory > 0) scenario.device_memory_bytes = m_hostMemory;
  m_prediction = predict::predict_scenario(scenario, m_evidence);
  const auto& p = m_prediction;
  const bool gpu = p.cuda;
  // CPU ranks are processes on this host: they share its memory.
  const double ranks_here = gpu ? 1.0 : double(std::max(1, config.world_size));
  const double needed = double(p.memory.device_needed_bytes) * ranks_here;
  const double available = double(p.device_memory_bytes);
  if (available > 0) {
    m_fit = needed <= available ? predict::Fit::Fits : predict::Fit::DoesNotFit;
    if (m_fit == predict::Fit::Fits && gpu) m_fit = predict::fit_of(p.memory, p.device_memory_bytes);
  } else {
    m_fit = predict::Fit::Fits;
  }
  QString where = gpu ? (p.gpu ? QString::fromStdString(p.gpu->name) : QString::fromStdString(scenario.gpu))
                      : QStringLiteral("this host (%1 rank(s))").arg(config.world_size);
  QString memory = QStringLiteral("<b>Memory %1</b>: peak %2 (%3); needs %4")
                       .arg(gpu ? QStringLiteral("per GPU") : QStringLiteral("per rank"))
                       .arg(bytes(double(p.memory.peak_bytes)))
                       .arg(QString::fromStdString(p.memory.peak_at).toHtmlEscaped())
                       .arg(bytes(double(p.memory.device_needed_bytes)));
  if (available > 0) memory += QStringLiteral(" of %1 on %2").arg(bytes(available)).arg(where.toHtmlEscaped());
  m_memory->setText(memory);
  m_memoryBar->setVisible(available > 0);
  m_memoryBar->setValue(available > 0 ? int(std::min(1.0, needed / available) * 1000) : 0);
  m_memoryBar->setStyleSheet(
      m_fit == predict::Fit::DoesNotFit ? QStringLiteral("QProgressBar::chunk { background: #c62828; }") : QString());
  m_warning->setText(warningText());
  m_warning->setVisible(!m_warning->text().isEmpty());

  if (p.step) {
    const auto& s = *p.step;
    QString step = QStringLiteral("<b>Step</b> %1: forward %2, backward %3, optimizer %4")
                       .arg(ms(s.step_ms), ms(s.forward_ms), ms(s.backward_ms), ms(s.optimizer_ms));
    if (config.world_size > 1)
      step += QStringLiteral(", exposed communication %1 (floor %2)").arg(ms(s.exposed_comm_ms), ms(s.comm_floor_ms));
    if (s.data_wait_ms >= 0.05) step += QStringLiteral(", data wait %1").arg(ms(s.data_wait_ms));
    step += QStringLiteral("<br><b>%1 tokens/s</b> per GPU, %2 in all")
                .arg(thousands(s.tokens_per_s_per_gpu), thousands(s.tokens_per_s_total));
    if (s.mfu) step += QStringLiteral(", MFU %1 %").arg(100.0 * *s.mfu, 0, 'f', 1);
    m_step->setText(step);
  } else {
    m_step->setText(gpu ? QStringLiteral("Step time: unknown for this device (not in the hardware catalogue).")
                        : QStringLiteral("Step time: predicted for GPUs only (the catalogue has no CPU peaks)."));
  }
  m_scaling->setText(p.scaling ? QString::fromStdString(p.scaling->statement).toHtmlEscaped() : QString());
  m_scaling->setVisible(p.scaling.has_value());
  m_link->setText(linkText());
  m_link->setVisible(!m_link->text().isEmpty());
  QStringList basis;
  for (const auto& n : p.notes)
    if (!(p.link && n.rfind("link: ", 0) == 0))  // the link line says it
      basis << QString::fromStdString(n).toHtmlEscaped();
  m_basis->setText(basis.join(QStringLiteral("<br>")));
}

QString PredictionPanel::linkText() const {
  const auto& p = m_prediction;
  if (!p.link || p.scenario.config.world_size < 2) return {};
  const auto& l = *p.link;
  auto gbps = [](double v) { return QString::number(v, 'f', v < 10 ? 2 : 0) + QStringLiteral(" GB/s"); };
  QString figures;
  if (l.measured()) {
    double lo = l.points.front().second, hi = lo;
    for (const auto& pt : l.points) {
      lo = std::min(lo, pt.second);
      hi = std::max(hi, pt.second);
    }
    figures = QStringLiteral("%1 bus bandwidth from %2 to %3")
                  .arg(lo == hi ? gbps(hi) : gbps(lo) + QStringLiteral("–") + gbps(hi))
                  .arg(bytes(l.points.front().first), bytes(l.points.back().first));
  } else {
    figures = QStringLiteral("%1 bus bandwidth").arg(gbps(l.busbw_gbps));
  }
  QString text = QStringLiteral("<b>Link</b> between the %1 ranks: %2, %3 <span style='color: palette(mid);'>(%4)</span>")
                     .arg(p.scenario.config.world_size)
                     .arg(QString::fromStdString(l.name).toHtmlEscaped(), figures,
                          QString::fromStdString(l.source).toHtmlEscaped());
  if (p.cuda && !p.contention_source.empty())
    text += QStringLiteral("; contention %1 (%2)")
                .arg(p.contention, 0, 'f', 2)
                .arg(QString::fromStdString(p.contention_source).toHtmlEscaped());
  return text;
}

void PredictionPanel::setMeasureLinkAction(QAction* action) {
  m_measureLink->setDefaultAction(action);
  m_measureLink->setToolButtonStyle(Qt::ToolButtonTextOnly);
  m_measureLink->setVisible(action != nullptr);
}

QString PredictionPanel::warningText() const {
  const auto& p = m_prediction;
  if (p.device_memory_bytes <= 0 || m_fit == predict::Fit::Fits) return {};
  if (m_fit == predict::Fit::Tight)
    return QStringLiteral("Tight: %1 needed of %2; the allocator may have to free its cache and retry.")
        .arg(bytes(double(p.memory.device_needed_bytes)), bytes(double(p.device_memory_bytes)));
  const bool gpu = p.cuda;
  const double ranks = gpu ? 1.0 : double(std::max(1, p.scenario.config.world_size));
  return QStringLiteral(
             "Will not fit: needs %1 %2 but %3 has %4. Running it will end out of memory; try "
             "checkpointing, a smaller micro-batch, FSDP or pure-bf16.")
      .arg(bytes(double(p.memory.device_needed_bytes) * ranks))
      .arg(gpu ? QStringLiteral("per GPU") : QStringLiteral("for %1 rank(s) on this host").arg(int(ranks)))
      .arg(gpu ? QStringLiteral("the GPU") : QStringLiteral("this host"))
      .arg(bytes(double(p.device_memory_bytes)));
}

QString PredictionPanel::summaryText() const { return m_memory->text() + QStringLiteral("\n") + m_step->text(); }

}  // namespace tunebench::ui

#include "ui/windows/prediction_panel.h"

#include <QLabel>
#include <QLocale>
#include <QProgressBar>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>

#include "core/analysis/format.h"
#include "core/predict/render.h"
#include "ui/windows/target_picker.h"

namespace tunebench::ui {

namespace {

QString bytes(double b) { return QString::fromStdString(predict::format_bytes(b)); }

QString ms(double v) { return QString::number(v, 'f', v < 10 ? 1 : 0) + QStringLiteral(" ms"); }

QString thousands(double v) { return QLocale(QLocale::English).toString(qint64(v + 0.5)); }

// Where the worker would run the form's trial: device auto means the GPUs when there are any.
bool uses_gpu(const config::TrialConfig& c, const DeviceInventory& d) {
  return c.device == config::Device::Cuda || (c.device == config::Device::Auto && d.hasGpu());
}

}  // namespace

PredictionPanel::PredictionPanel(QWidget* parent) : QWidget(parent) {
  setObjectName(QStringLiteral("predictionPanel"));
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(6, 6, 6, 6);
  m_picker = new TargetPicker(QStringLiteral("prediction"), this);
  connect(m_picker, &TargetPicker::changed, this, [this] {
    m_defaulted = true;  // the user's choice from now on
    emit targetChanged();
  });
  m_pickerNote = new QLabel(this);
  m_pickerNote->setObjectName(QStringLiteral("predictionTargetNote"));
  m_pickerNote->setWordWrap(true);
  m_pickerNote->setStyleSheet(QStringLiteral("color: palette(mid);"));
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
       {static_cast<QWidget*>(m_picker), static_cast<QWidget*>(m_pickerNote), static_cast<QWidget*>(m_memory),
        static_cast<QWidget*>(m_memoryBar), static_cast<QWidget*>(m_warning), static_cast<QWidget*>(m_step),
        static_cast<QWidget*>(m_scaling), static_cast<QWidget*>(m_link)})
    layout->addWidget(w);
  m_measureLink = new QToolButton(this);
  m_measureLink->setObjectName(QStringLiteral("measureLinkButton"));
  m_measureLink->setVisible(false);
  layout->addWidget(m_measureLink, 0, Qt::AlignLeft);
  layout->addWidget(m_basis);
  layout->addStretch(1);
}

void PredictionPanel::setEvidence(std::vector<const predict::MeasuredTrial*> evidence,
                                  std::vector<std::string> notUsed) {
  m_evidence = std::move(evidence);
  m_notUsed = std::move(notUsed);
}

void PredictionPanel::showRefused(const QString& why) {
  m_prediction = predict::Prediction{};
  m_problem = why;
  showNoPrediction();
}

void PredictionPanel::showNoPrediction() {
  m_memory->setText(QStringLiteral("No prediction: %1").arg(m_problem.toHtmlEscaped()));
  for (QWidget* w : {static_cast<QWidget*>(m_memoryBar), static_cast<QWidget*>(m_warning),
                     static_cast<QWidget*>(m_step), static_cast<QWidget*>(m_scaling), static_cast<QWidget*>(m_link)})
    w->setVisible(false);
  m_basis->clear();
}

void PredictionPanel::setDefaultTarget(const DeviceInventory& devices, const predict::Target& fallback) {
  if (!fallback.gpu.empty()) m_fallback = fallback;
  if (m_defaulted) return;  // the user chose, or the detected GPUs were applied
  predict::Target t = m_fallback;
  if (devices.hasGpu())
    if (const auto* g = hardware::find_gpu(devices.gpus.front().name.toStdString())) {
      t.gpu = g->id;
      t.gpus = int(devices.gpus.size());
      m_defaulted = true;
    }
  m_picker->setTarget(t);
}

void PredictionPanel::showPrediction(const config::TrialConfig& config, const DeviceInventory& devices) {
  setDefaultTarget(devices);
  const bool gpu = uses_gpu(config, devices);
  config::TrialConfig c = config;
  predict::Target target;
  if (gpu) {
    // The count follows the form's ranks; changed in the picker, it asks "what if on N GPUs?".
    if (config.world_size != m_formWorld) {
      m_formWorld = config.world_size;
      predict::Target follow = m_picker->target();
      follow.gpus = config.world_size;
      m_picker->setTarget(follow);
    }
    target = m_picker->target();
    // The GPU this machine has keeps the memory it reported.
    if (devices.hasGpu())
      if (const auto* g = hardware::find_gpu(devices.gpus.front().name.toStdString()); g && g->id == target.gpu)
        target.memory_bytes = devices.gpus.front().memory_bytes;
    c.device = config::Device::Cuda;
  } else {
    c.device = config::Device::Cpu;
    target.memory_bytes = m_hostMemory;
  }
  m_picker->setEnabled(gpu);
  m_pickerNote->setText(gpu ? (target.gpus != config.world_size
                                   ? QStringLiteral("What if on %1 GPU(s): the form's trial runs %2 rank(s).")
                                         .arg(target.gpus)
                                         .arg(config.world_size)
                                   : QString())
                            : QStringLiteral("CPU ranks: predicted against this host's memory."));
  m_pickerNote->setVisible(!m_pickerNote->text().isEmpty());
  try {
    const predict::TargetedScenario scenario = predict::scenario_for(c, target, m_evidence);
    m_prediction = predict::predict_scenario(scenario.scenario, m_evidence);
    m_adjusted = scenario.notes;
    m_problem.clear();
  } catch (const std::exception& e) {
    m_prediction = predict::Prediction{};
    m_adjusted.clear();
    m_problem = QString::fromStdString(e.what());
  }
  const auto& p = m_prediction;
  if (!m_problem.isEmpty()) {
    showNoPrediction();
    return;
  }
  // The memory line of `tunebench-cli predict`, with its verdict; the label in bold.
  QString memory = QString::fromStdString(predict::memory_line(p)).toHtmlEscaped();
  if (const int colon = memory.indexOf(QLatin1Char(':')); colon > 0)
    memory = QStringLiteral("<b>%1</b>%2").arg(memory.left(colon), memory.mid(colon));
  if (p.cuda && p.gpu) memory += QStringLiteral(" (%1)").arg(QString::fromStdString(p.gpu->name).toHtmlEscaped());
  m_memory->setText(memory);
  const double needed = double(p.memory.device_needed_bytes) * p.ranks_sharing_memory;
  const double available = double(p.device_memory_bytes);
  m_memoryBar->setVisible(available > 0);
  m_memoryBar->setValue(available > 0 ? int(std::min(1.0, needed / available) * 1000) : 0);
  m_memoryBar->setStyleSheet(
      p.fit == predict::Fit::DoesNotFit ? QStringLiteral("QProgressBar::chunk { background: #c62828; }") : QString());
  m_warning->setText(warningText());
  m_warning->setVisible(!m_warning->text().isEmpty());

  if (p.step) {
    const auto& s = *p.step;
    QString step = QStringLiteral("<b>Step</b> %1: forward %2, backward %3, optimizer %4")
                       .arg(ms(s.step_ms), ms(s.forward_ms), ms(s.backward_ms), ms(s.optimizer_ms));
    if (p.scenario.config.world_size > 1)
      step += QStringLiteral(", exposed communication %1 (floor %2)").arg(ms(s.exposed_comm_ms), ms(s.comm_floor_ms));
    if (s.data_wait_ms >= 0.05) step += QStringLiteral(", data wait %1").arg(ms(s.data_wait_ms));
    step += QStringLiteral("<br><b>%1 tokens/s</b> per GPU, %2 in all")
                .arg(thousands(s.tokens_per_s_per_gpu), thousands(s.tokens_per_s_total));
    if (s.mfu) step += QStringLiteral(", MFU %1 %").arg(100.0 * *s.mfu, 0, 'f', 1);
    m_step->setText(step);
  } else {
    m_step->setText(p.cuda ? QStringLiteral("Step time: unknown for this GPU (not in the hardware catalogue, or no "
                                            "peak for this precision).")
                           : QStringLiteral("Step time: not predicted for CPU ranks (the hardware catalogue has GPU "
                                            "peaks only); Run measures it."));
  }
  m_step->setVisible(true);
  m_scaling->setText(p.scaling ? QString::fromStdString(p.scaling->statement).toHtmlEscaped() : QString());
  m_scaling->setVisible(p.scaling.has_value());
  m_link->setText(linkText());
  m_link->setVisible(!m_link->text().isEmpty());
  QStringList basis;
  for (const auto& n : m_adjusted) basis << QString::fromStdString(n).toHtmlEscaped();
  for (const auto& n : p.notes)
    if (!(p.link && n.rfind("link: ", 0) == 0))  // the link line says it
      basis << QString::fromStdString(n).toHtmlEscaped();
  for (const auto& n : m_notUsed) basis << QString::fromStdString(n).toHtmlEscaped();
  m_basis->setText(basis.join(QStringLiteral("<br>")));
}

QString PredictionPanel::linkText() const {
  const auto& p = m_prediction;
  if (!p.link || p.scenario.config.world_size < 2) return {};
  const auto& l = *p.link;
  // Bandwidths as the comparison and the diagnosis write them (three significant digits).
  auto gbps = [](double v) { return QString::fromStdString(analysis::format_gbps(v)); };
  QString figures;
  if (l.measured()) {
    double lo = l.points.front().second, hi = lo;
    for (const auto& pt : l.points) {
      lo = std::min(lo, pt.second);
      hi = std::max(hi, pt.second);
    }
    // A curve over message sizes, not the trial's one bytes-weighted figure (Bus bandwidth in the
    // comparison and the diagnosis): said so, so the two never read as one figure that disagrees.
    figures = QStringLiteral("%1 bus bandwidth by message size, from %2 to %3")
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
  if (m_prediction.fit == predict::Fit::Fits) return {};
  return QString::fromStdString(predict::fit_sentence(m_prediction));
}

QString PredictionPanel::summaryText() const { return m_memory->text() + QStringLiteral("\n") + m_step->text(); }

}  // namespace tunebench::ui

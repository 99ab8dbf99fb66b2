#include "ui/windows/what_if_dialog.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLocale>
#include <QSpinBox>
#include <QTableWidget>
#include <QVBoxLayout>

#include "core/predict/render.h"
#include "ui/windows/target_picker.h"

namespace tunebench::ui {

namespace {

constexpr int kRows = 8;

// The rows, in the words of what the ranks run on (config::device_noun): "GPU" when the trial and
// the prediction both run on GPUs, "CPU rank" when both run on the CPU, else "rank" (a CPU trial
// asked about on a GPU; the column headers then name each side's device).
QStringList row_names(bool trial_cuda, bool predicted_cuda) {
  const bool same = trial_cuda == predicted_cuda;
  const QString one = same ? QString::fromStdString(config::device_noun(predicted_cuda)) : QStringLiteral("rank");
  const QString many = same ? QString::fromStdString(config::device_noun(predicted_cuda, true)) : QStringLiteral("ranks");
  const QString fits = same && !predicted_cuda ? QStringLiteral("Fits the host's memory?") : QStringLiteral("Fits the %1?").arg(one);
  return {QStringLiteral("Step"),
          QStringLiteral("Tokens/s per %1").arg(one),
          QStringLiteral("Tokens/s, all %1").arg(many),
          QStringLiteral("Peak memory per %1").arg(one),
          fits,
          QStringLiteral("Communication floor"),
          QStringLiteral("Exposed communication"),
          QStringLiteral("vs one %1").arg(one)};
}

QStringList column_names(bool trial_cuda, bool predicted_cuda) {
  return {QStringLiteral("measured (this trial, %1)").arg(QString::fromStdString(config::device_noun(trial_cuda, true))),
          QStringLiteral("what if (predicted, %1)").arg(QString::fromStdString(config::device_noun(predicted_cuda, true)))};
}

QString num(double v, int decimals = 0) { return QLocale(QLocale::English).toString(v, 'f', decimals); }
QString bytes(double b) { return QString::fromStdString(predict::format_bytes(b)); }

QComboBox* choices(const std::vector<std::string>& items, const std::string& current, QWidget* parent) {
  auto* box = new QComboBox(parent);
  for (const auto& i : items) box->addItem(QString::fromStdString(i));
  box->setCurrentText(QString::fromStdString(current));
  return box;
}

}  // namespace

WhatIfDialog::WhatIfDialog(predict::MeasuredTrial trial, std::vector<predict::MeasuredTrial> session, QWidget* parent)
    : QDialog(parent), m_trial(std::move(trial)), m_session(std::move(session)) {
  setObjectName(QStringLiteral("whatIfDialog"));
  setWindowTitle(QStringLiteral("What if… %1").arg(QString::fromStdString(m_trial.label)));
  m_evidence.push_back(&m_trial);
  for (const auto& t : m_session)
    if (t.log != m_trial.log) m_evidence.push_back(&t);
  const config::TrialConfig& c = m_trial.config;

  auto* form = new QFormLayout;
  // The GPUs, their count and link: the picker the Prediction dock has (tunebench-cli's --gpu,
  // --gpus, --link), starting from what the trial ran on.
  m_picker = new TargetPicker(QStringLiteral("whatIf"), this);
  predict::Target ran;
  ran.gpu = m_trial.gpu ? m_trial.gpu->id : std::string();
  ran.gpus = c.world_size;
  m_picker->setTarget(ran);
  form->addRow(QStringLiteral("GPUs"), m_picker);
  m_strategy = choices({"single", "ddp", "fsdp"}, std::string(config::to_string(c.strategy)), this);
  m_strategy->setObjectName(QStringLiteral("whatIfStrategy"));
  form->addRow(QStringLiteral("Strategy"), m_strategy);
  m_microBatch = new QSpinBox(this);
  m_microBatch->setRange(1, 4096);
  m_microBatch->setValue(int(c.micro_batch));
  form->addRow(QStringLiteral("Micro-batch"), m_microBatch);
  m_accum = new QSpinBox(this);
  m_accum->setObjectName(QStringLiteral("whatIfAccumulation"));
  m_accum->setRange(1, 1024);
  m_accum->setValue(int(c.grad_accum));
  form->addRow(QStringLiteral("Gradient accumulation"), m_accum);
  m_checkpointing = new QCheckBox(this);
  m_checkpointing->setChecked(c.checkpointing);
  form->addRow(QStringLiteral("Activation checkpointing"), m_checkpointing);
  m_amp = choices({"fp32", "tf32", "bf16", "fp16", "pure-bf16"}, std::string(config::to_string(c.amp)), this);
  form->addRow(QStringLiteral("Precision"), m_amp);
  m_compression = choices({"none", "fp16", "bf16"}, std::string(config::to_string(c.compression)), this);
  form->addRow(QStringLiteral("DDP compression"), m_compression);

  m_table = new QTableWidget(kRows, 2, this);
  m_table->setObjectName(QStringLiteral("whatIfTable"));
  m_table->setHorizontalHeaderLabels(column_names(m_trial.cuda, m_trial.cuda));
  m_table->setVerticalHeaderLabels(row_names(m_trial.cuda, m_trial.cuda));
  m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
  m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
  m_verdict = new QLabel(this);
  m_verdict->setObjectName(QStringLiteral("whatIfVerdict"));
  m_verdict->setWordWrap(true);
  m_basis = new QLabel(this);
  m_basis->setWordWrap(true);
  m_basis->setStyleSheet(QStringLiteral("color: palette(mid);"));

  auto* top = new QHBoxLayout;
  top->addLayout(form);
  top->addWidget(m_table, 1);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(top);
  layout->addWidget(m_verdict);
  layout->addWidget(m_basis);
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  layout->addWidget(buttons);

  connect(m_picker, &TargetPicker::changed, this, &WhatIfDialog::recompute);
  for (QComboBox* box : {m_strategy, m_amp, m_compression})
    connect(box, &QComboBox::currentIndexChanged, this, &WhatIfDialog::recompute);
  for (QSpinBox* spin : {m_microBatch, m_accum})
    connect(spin, &QSpinBox::valueChanged, this, &WhatIfDialog::recompute);
  connect(m_checkpointing, &QCheckBox::toggled, this, &WhatIfDialog::recompute);
  fillMeasured();
  recompute();
  resize(980, 520);
}

predict::Scenario WhatIfDialog::scenario() const {
  config::TrialConfig c = m_trial.config;
  config::set_knob(c, "strategy", m_strategy->currentText().toStdString());
  c.micro_batch = m_microBatch->value();
  c.grad_accum = m_accum->value();
  c.checkpointing = m_checkpointing->isChecked();
  config::set_knob(c, "amp", m_amp->currentText().toStdString());
  predict::Target t = m_picker->target();
  // The trial's own GPU keeps the memory it reported.
  if (m_trial.gpu && t.gpu == m_trial.gpu->id) t.memory_bytes = m_trial.device_memory_bytes;
  // The same scenario `tunebench-cli predict --gpu --gpus --link` builds (a count of 1 is single,
  // more is ddp when the strategy was single; a CPU trial is asked about on the chosen GPU).
  predict::Scenario s = predict::scenario_for(c, t, m_evidence).scenario;
  config::set_knob(s.config, "compression",
                   s.config.strategy == config::Strategy::Ddp ? m_compression->currentText().toStdString()
                                                              : std::string("none"));
  return s;
}

QComboBox* WhatIfDialog::gpuCombo() const { return m_picker->gpuCombo(); }
QSpinBox* WhatIfDialog::gpuCount() const { return m_picker->countBox(); }
QComboBox* WhatIfDialog::linkCombo() const { return m_picker->linkCombo(); }

void WhatIfDialog::fillMeasured() {
  const auto& m = m_trial.metrics;
  auto set = [this](int row, const QString& text) { m_table->setItem(row, 0, new QTableWidgetItem(text)); };
  set(0, QStringLiteral("%1 ms").arg(num(m.step_ms.median, 1)));
  set(1, num(m.tokens_per_s_per_gpu.median));
  set(2, num(m.tokens_per_s_total.median));
  set(3, m.peak_bytes > 0 ? bytes(double(m.peak_bytes)) : QStringLiteral("–"));
  set(4, m.oom ? QStringLiteral("no (out of memory)") : QStringLiteral("yes (it ran)"));
  set(5, m.comm_floor_ms ? QStringLiteral("%1 ms").arg(num(*m.comm_floor_ms, 1)) : QStringLiteral("–"));
  set(6, m.has_comm() ? QStringLiteral("%1 ms").arg(num(m.exposed_comm_ms.median, 1)) : QStringLiteral("–"));
  set(7, QStringLiteral("–"));
}

void WhatIfDialog::recompute() {
  try {
    m_prediction = predict::predict_scenario(scenario(), m_evidence);
  } catch (const std::exception& e) {  // a GPU or link the catalogue does not know: said, not a crash
    m_verdict->setText(QString::fromStdString(e.what()));
    return;
  }
  const auto& p = m_prediction;
  m_table->setHorizontalHeaderLabels(column_names(m_trial.cuda, p.cuda));
  m_table->setVerticalHeaderLabels(row_names(m_trial.cuda, p.cuda));
  auto set = [this](int row, const QString& text) { m_table->setItem(row, 1, new QTableWidgetItem(text)); };
  const bool fits = p.fit != predict::Fit::DoesNotFit;
  if (p.step) {
    const auto& s = *p.step;
    set(0, QStringLiteral("%1 ms%2").arg(num(s.step_ms, 1), fits ? QString() : QStringLiteral(" (if it fit)")));
    set(1, num(s.tokens_per_s_per_gpu));
    set(2, num(s.tokens_per_s_total));
    set(5,
        p.scenario.config.world_size > 1 ? QStringLiteral("%1 ms").arg(num(s.comm_floor_ms, 1)) : QStringLiteral("–"));
    set(6, p.scenario.config.world_size > 1 ? QStringLiteral("%1 ms").arg(num(s.exposed_comm_ms, 1))
                                            : QStringLiteral("–"));
  } else {
    for (int r : {0, 1, 2, 5, 6}) set(r, QStringLiteral("unknown"));
  }
  set(3, bytes(double(p.memory.peak_bytes)));
  set(4, QStringLiteral("%1 (needs %2 of %3)")
             .arg(QString::fromUtf8(predict::to_string(p.fit)), bytes(double(p.memory.device_needed_bytes)),
                  bytes(double(p.device_memory_bytes))));
  set(7, p.scaling ? QStringLiteral("%1x").arg(num(p.scaling->speedup, 2)) : QStringLiteral("–"));
  QString verdict;
  if (p.scaling) verdict = QString::fromStdString(p.scaling->statement);
  if (!fits)
    verdict = QStringLiteral("It does not fit: ") + bytes(double(p.memory.device_needed_bytes)) +
              QStringLiteral(" per %1 needed. ").arg(QString::fromStdString(config::device_noun(p.cuda))) + verdict;
  m_verdict->setText(verdict);
  QStringList basis;
  for (const auto& n : p.notes) basis << QString::fromStdString(n);
  m_basis->setText(basis.join('\n'));
}

}  // namespace tunebench::ui

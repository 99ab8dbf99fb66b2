#include "ui/windows/what_if_dialog.h"

#include <algorithm>

#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLocale>
#include <QSignalBlocker>
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
          QStringLiteral("Peak allocated per %1").arg(one),
          fits,
          QStringLiteral("Communication floor"),
          QStringLiteral("Exposed communication"),
          QStringLiteral("vs one %1").arg(one)};
}

// The two memory rows, each named for what it is: the allocator's peak (what the worker measures)
// and what must fit the device (that peak plus what the allocator does not count) against its
// capacity. Shown side by side without names they read as one figure disagreeing with itself.
void set_row_names(QTableWidget* table, bool trial_cuda, bool predicted_cuda) {
  table->setVerticalHeaderLabels(row_names(trial_cuda, predicted_cuda));
  table->verticalHeaderItem(3)->setToolTip(QStringLiteral(
      "The caching allocator's peak allocation on one device: what the worker measures as its peak memory "
      "(measured) and the memory model's peak of the tensors (predicted)."));
  table->verticalHeaderItem(4)->setToolTip(QStringLiteral(
      "What must fit one device: the peak above plus what the allocator does not count (CUDA context, NCCL "
      "buffers, the allocator's slack), against the device's capacity."));
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
  m_picker->showFullNames();  // at 1280 x 760 every GPU and link name reads in full
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
  set_row_names(m_table, m_trial.cuda, m_trial.cuda);
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
  connect(m_strategy, &QComboBox::currentIndexChanged, this, [this] {
    followStrategy();
    recompute();
  });
  followStrategy();
  for (QComboBox* box : {m_amp, m_compression})
    connect(box, &QComboBox::currentIndexChanged, this, &WhatIfDialog::recompute);
  for (QSpinBox* spin : {m_microBatch, m_accum})
    connect(spin, &QSpinBox::valueChanged, this, &WhatIfDialog::recompute);
  connect(m_checkpointing, &QCheckBox::toggled, this, &WhatIfDialog::recompute);
  fillMeasured();
  recompute();
  resize(1180, 560);
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

void WhatIfDialog::followStrategy() {
  // Strategy single is one GPU (tunebench-worker runs one rank): its count is 1, not a DDP run
  // under the word "single". Leaving single restores the count it had, at least 2.
  QSpinBox* count = m_picker->countBox();
  const QSignalBlocker block(count);
  const bool single = m_strategy->currentText() == QStringLiteral("single");
  if (single) {
    if (count->isEnabled() && count->value() > 1) m_countBeforeSingle = count->value();
    count->setValue(1);
  } else if (!count->isEnabled() || count->value() < 2) {
    count->setValue(std::max(2, m_countBeforeSingle));
  }
  count->setEnabled(!single);
  count->setToolTip(single ? QStringLiteral("Strategy single runs on one GPU: choose ddp or fsdp for more.")
                           : QStringLiteral("How many GPUs: the world size (--gpus)"));
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

QString WhatIfDialog::fitText(const predict::Prediction& p) const {
  // "fits: needs 116.0 GiB per GPU (the peak + CUDA context, NCCL buffers, caching allocator slack)
  // of the GPU's 139.8 GiB": what is needed, per what, and the capacity it is compared with.
  const QString noun = QString::fromStdString(config::device_noun(p.cuda));
  QStringList added;
  for (const auto& o : p.memory.overheads) added << QString::fromStdString(o.name);
  QString text = QStringLiteral("%1: needs %2 per %3")
                     .arg(QString::fromUtf8(predict::to_string(p.fit)), bytes(double(p.memory.device_needed_bytes)), noun);
  if (!added.isEmpty()) text += QStringLiteral(" (the peak + %1)").arg(added.join(QStringLiteral(", ")));
  if (p.ranks_sharing_memory > 1)
    text += QStringLiteral(" x %1 ranks").arg(p.ranks_sharing_memory);
  if (p.device_memory_bytes <= 0) return text + QStringLiteral("; the %1's memory is unknown").arg(noun);
  return text + (p.cuda ? QStringLiteral(" of the GPU's %1") : QStringLiteral(" of this host's %1"))
                    .arg(bytes(double(p.device_memory_bytes)));
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
  set_row_names(m_table, m_trial.cuda, p.cuda);
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
  set(4, fitText(p));
  if (!p.scaling)
    set(7, QStringLiteral("–"));
  else
    set(7, p.scaling->fits ? QStringLiteral("%1x").arg(num(p.scaling->speedup, 2))
                           : QStringLiteral("– (does not fit)"));
  // The verdict is core/predict's (the CLI and the Prediction dock print the same): none on a
  // config that does not fit, only that it does not.
  QString verdict;
  if (p.scaling)
    verdict = QString::fromStdString(p.scaling->statement);
  else if (!fits)
    verdict = QString::fromStdString(predict::fit_sentence(p));
  m_verdict->setText(verdict);
  QStringList basis;
  for (const auto& n : p.notes) basis << QString::fromStdString(n);
  m_basis->setText(basis.join('\n'));
}

}  // namespace tunebench::ui

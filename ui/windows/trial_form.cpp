#include "ui/windows/trial_form.h"

#include <QApplication>
#include <QComboBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGroupBox>
#include <QLabel>
#include <QMessageBox>
#include <QPushButton>
#include <QScrollArea>
#include <QPointer>
#include <QThread>
#include <QVBoxLayout>

#include "core/config/hf_config.h"
#include "core/config/script.h"
#include "core/launch/worker_program.h"

#include "ui/models/status_colors.h"
#include "ui/windows/dialog_front.h"
#include "ui/windows/knob_field.h"
#include "ui/windows/wheel_guard.h"

namespace tunebench::ui {

namespace {
const char* const kGroups[] = {"Your script",   "Model & data", "Parallelism", "Precision & kernels",
                               "Communication", "Run length",   "Where"};
constexpr const char* kScriptGroup = "Your script";
}  // namespace

TrialForm::TrialForm(QWidget* parent) : QWidget(parent) {
  setObjectName(QStringLiteral("trialForm"));
  setStyleSheet(
      QStringLiteral("QLineEdit[invalid=\"true\"], QSpinBox[invalid=\"true\"], QComboBox[invalid=\"true\"] {"
                     " border: 2px solid #c62828; border-radius: 3px; }"));
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(6, 6, 6, 6);

  auto* top = new QFormLayout;
  m_presets = new QComboBox(this);
  m_presets->setObjectName(QStringLiteral("presets"));
  for (const auto& p : config::trial_presets()) {
    m_presets->addItem(QString::fromStdString(p.name));
    m_presets->setItemData(m_presets->count() - 1, QString::fromStdString(p.description), Qt::ToolTipRole);
  }
  connect(m_presets, &QComboBox::activated, this, [this](int i) {
    if (!m_presets->itemData(i).toBool()) applyPreset(m_presets->itemText(i));  // not the "(edited)" entry
  });
  top->addRow(QStringLiteral("Preset"), m_presets);
  m_program = new QComboBox(this);
  m_program->setObjectName(QStringLiteral("program"));
  m_program->addItems({QStringLiteral("the LLaMA benchmark"), QStringLiteral("your own script")});
  m_program->setToolTip(QStringLiteral(
      "The LLaMA benchmark (tunebench-worker), or your own unmodified PyTorch training script run under "
      "tunebench_probe: its live phases, knobs applied without code changes, A/B and diagnosis (docs/SCRIPTS.md)"));
  connect(m_program, &QComboBox::activated, this, [this](int i) { setScriptMode(i == 1); });
  top->insertRow(0, QStringLiteral("Run"), m_program);
  m_devicesLabel = new QLabel(this);
  m_devicesLabel->setObjectName(QStringLiteral("devices"));
  m_devicesLabel->setWordWrap(true);
  top->addRow(QStringLiteral("Devices"), m_devicesLabel);
  layout->addLayout(top);

  for (const char* group : kGroups) {
    // '&' would become a mnemonic underscore ("Model _data").
    auto* box = new QGroupBox(QString::fromUtf8(group).replace('&', QStringLiteral("&&")), this);
    m_groups[group] = box;
    auto* form = new QFormLayout(box);
    form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    for (const auto& knob : config::knobs()) {
      if (knob.group != group) continue;
      auto* field = new KnobField(knob, box);
      auto* label = new QLabel(QString::fromStdString(knob.label), box);
      label->setToolTip(KnobField::tooltipFor(knob));
      label->setBuddy(field->editor());
      form->addRow(label, field);
      m_fields[knob.key] = field;
      connect(field, &KnobField::edited, this, [this, field] { onEdited(field); });
      if (knob.key == "model") {
        auto* fromFile = new QPushButton(QStringLiteral("Model from config.json…"), box);
        fromFile->setObjectName(QStringLiteral("modelFromHfConfig"));
        fromFile->setToolTip(QStringLiteral(
            "Take the model's shape from a Hugging Face config.json: hidden_size, intermediate_size, "
            "num_hidden_layers, num_attention_heads, num_key_value_heads, vocab_size, tie_word_embeddings, "
            "rope_theta. Fields the model cannot express (biases, sliding windows, experts) are named."));
        connect(fromFile, &QPushButton::clicked, this, &TrialForm::chooseHfConfig);
        form->addRow(QString(), fromFile);
      }
      if (knob.key == "script") {
        auto* browse = new QPushButton(QStringLiteral("Choose the script…"), box);
        browse->setObjectName(QStringLiteral("chooseScript"));
        connect(browse, &QPushButton::clicked, this, &TrialForm::chooseScript);
        form->addRow(QString(), browse);
      }
      if (knob.key == "python") {
        m_pythonFound = new QLabel(box);
        m_pythonFound->setObjectName(QStringLiteral("pythonFound"));
        m_pythonFound->setWordWrap(true);
        form->addRow(QString(), m_pythonFound);
      }
    }
    layout->addWidget(box);
  }
  m_summary = new QLabel(this);
  m_summary->setObjectName(QStringLiteral("summary"));
  m_summary->setWordWrap(true);
  layout->addWidget(m_summary);
  layout->addStretch(1);
  guard_wheel(this);  // the wheel scrolls the form; a field takes it once clicked into
  setConfig(config::TrialConfig{});
}

KnobField* TrialForm::field(const QString& key) const {
  auto it = m_fields.find(key.toStdString());
  return it == m_fields.end() ? nullptr : it->second;
}

config::TrialConfig TrialForm::config() const {
  config::TrialConfig c;
  // Model first: choosing a preset sets the dimensions, which the dim fields then repeat.
  for (const auto& knob : config::knobs())
    if (auto it = m_fields.find(knob.key); it != m_fields.end())
      config::set_knob(c, knob.key, it->second->text().toStdString());
  return c;
}

void TrialForm::setConfig(const config::TrialConfig& c, const Origin& origin) {
  m_origin = origin;
  m_program->setCurrentIndex(config::is_script(c) ? 1 : 0);
  m_presetName.clear();
  for (const auto& p : config::trial_presets())
    if (config::differing_knobs(p.config, c).empty()) m_presetName = QString::fromStdString(p.name);
  m_applying = true;
  for (auto& [key, field] : m_fields) field->setText(QString::fromStdString(config::knob_text(c, key)));
  m_applying = false;
  if (isScriptMode()) findPython();  // a stored script trial or a session's form: its interpreter now
  updateDependentFields();
  updatePresetBox();
  validateAndShow();
  emit changed();
}

bool TrialForm::isEditedFromPreset() const {
  const auto preset = config::trial_preset(m_presetName.toStdString());
  return !preset || !config::differing_knobs(*preset, config()).empty();
}

void TrialForm::updatePresetBox() {
  // The box names what the form holds: the preset, "preset (edited)" once a field differs from
  // it, or "custom" for a config that is no preset (a stored trial's, a --config file's).
  const QSignalBlocker block(m_presets);
  for (int i = m_presets->count() - 1; i >= 0; --i)
    if (m_presets->itemData(i).toBool()) m_presets->removeItem(i);
  if (!m_presetName.isEmpty() && !isEditedFromPreset()) {
    m_presets->setCurrentText(m_presetName);
    return;
  }
  const QString text =
      m_presetName.isEmpty() ? QStringLiteral("custom") : QStringLiteral("%1 (edited)").arg(m_presetName);
  m_presets->addItem(text, true);
  m_presets->setItemData(m_presets->count() - 1,
                         QStringLiteral("The form differs from every preset; choose one to start over"),
                         Qt::ToolTipRole);
  m_presets->setCurrentIndex(m_presets->count() - 1);
}

bool TrialForm::applyPreset(const QString& name) {
  const auto preset = config::trial_preset(name.toStdString());
  if (!preset) return false;
  setConfig(*preset);  // the user's own choice: no session origin
  m_presetName = name;
  updatePresetBox();
  return true;
}

bool TrialForm::loadHfConfig(const QString& path, QString* report) {
  const auto read = config::read_hf_config_file(path.toStdString());
  if (!read.model) {
    if (report) *report = QString::fromStdString(config::describe(read.problems)).trimmed();
    return false;
  }
  config::TrialConfig c = config();
  config::apply_hf_model(c, *read.model);
  m_applying = true;
  m_fields["model"]->setText(QString::fromStdString(c.model));
  for (const auto& k : config::model_dim_keys()) m_fields[k]->setText(QString::fromStdString(config::knob_text(c, k)));
  m_applying = false;
  updateDependentFields();
  updatePresetBox();
  validateAndShow();
  emit changed();
  if (report) {
    QStringList lines;
    lines << QStringLiteral("Model: %1 (%2)").arg(QString::fromStdString(c.model), QFileInfo(path).fileName());
    for (const auto& w : read.model->warnings) lines << QStringLiteral("• ") + QString::fromStdString(w);
    *report = lines.join('\n');
  }
  return true;
}

void TrialForm::chooseHfConfig() {
  // Window-modal and raised, never a blocking exec(): a run in progress keeps being drawn.
  auto* d = new QFileDialog(this, QStringLiteral("Model from config.json"), QString(),
                            QStringLiteral("Hugging Face config (*.json);;All files (*)"));
  d->setFileMode(QFileDialog::ExistingFile);
  d->setAttribute(Qt::WA_DeleteOnClose);
  connect(d, &QFileDialog::fileSelected, this, [this](const QString& path) {
    QString report;
    const bool ok = loadHfConfig(path, &report);
    if (ok && !report.contains(QStringLiteral("•"))) return;
    auto* box = new QMessageBox(
        ok ? QMessageBox::Information : QMessageBox::Warning, QStringLiteral("Model from config.json"),
        ok ? report + QStringLiteral("\n\nThese fields are not modelled; the trial runs without them.") : report,
        QMessageBox::Ok, this);
    box->setAttribute(Qt::WA_DeleteOnClose);
    open_in_front(box);
  });
  open_in_front(d);
}

bool TrialForm::isScriptMode() const { return m_program->currentIndex() == 1; }

void TrialForm::setScriptMode(bool script) {
  m_program->setCurrentIndex(script ? 1 : 0);
  KnobField* path = m_fields["script"];
  m_applying = true;
  if (!script && !path->text().isEmpty()) {
    m_lastScript = path->text();  // back when the script is chosen again
    path->setText(QString());
  } else if (script && path->text().isEmpty()) {
    path->setText(m_lastScript);
  }
  m_applying = false;
  if (script) findPython();
  updateDependentFields();
  updatePresetBox();
  validateAndShow();
  emit changed();
}

QString TrialForm::pythonFound() const { return m_pythonFound ? m_pythonFound->text() : QString(); }

void TrialForm::findPython() {
  // Importing torch takes a second or two: never on the GUI thread. The launch asks the same
  // cached search, so by then it answers at once.
  const std::string named = m_fields["python"]->text().toStdString();
  m_pythonFound->setText(QStringLiteral("looking for a Python with PyTorch…"));
  QPointer<TrialForm> self(this);
  QThread* t = QThread::create([self, named] {
    const launch::PythonFound f = launch::find_python(named);
    QMetaObject::invokeMethod(qApp, [self, named, f] {
      if (!self || self->m_fields["python"]->text().toStdString() != named) return;  // changed meanwhile
      self->m_pythonFound->setText(
          f.path.empty() ? QString::fromStdString(f.error)
                         : QStringLiteral("%1: PyTorch %2").arg(QString::fromStdString(f.path),
                                                                 QString::fromStdString(f.torch_version)));
    });
  });
  connect(t, &QThread::finished, t, &QObject::deleteLater);
  t->start();
}

void TrialForm::chooseScript() {
  auto* d = new QFileDialog(this, QStringLiteral("Your training script"), QString(),
                            QStringLiteral("Python scripts (*.py);;All files (*)"));
  d->setFileMode(QFileDialog::ExistingFile);
  d->setAttribute(Qt::WA_DeleteOnClose);
  connect(d, &QFileDialog::fileSelected, this, [this](const QString& path) {
    m_fields["script"]->setText(path);
    onEdited(m_fields["script"]);
  });
  open_in_front(d);
}

void TrialForm::onEdited(KnobField* field) {
  if (m_applying) return;
  if (field->key() == "python" && isScriptMode()) findPython();
  // Editing one of the probe's knobs on a script applies it to the script.
  if (isScriptMode() && config::is_script_knob(field->key().toStdString())) {
    config::TrialConfig c = config();
    config::apply_to_script(c, field->key().toStdString());
    m_applying = true;
    m_fields["script_knobs"]->setText(QString::fromStdString(config::knob_text(c, "script_knobs")));
    m_applying = false;
  }
  if (field->key() == "model") {
    // A preset model fills the dimensions; 'custom' keeps them for editing.
    if (const auto dims = config::model_preset(field->text().toStdString())) {
      config::TrialConfig c;
      c.dims = *dims;
      for (const auto& k : config::model_dim_keys())
        m_fields[k]->setText(QString::fromStdString(config::knob_text(c, k)));
    }
  }
  updateDependentFields();
  updatePresetBox();
  validateAndShow();
  emit changed();
}

void TrialForm::updateDependentFields() {
  // A script shows its group and, of the other knobs, those it can take; the benchmark all but
  // the script's group.
  const bool script = isScriptMode();
  m_presets->setEnabled(!script);
  {
    config::TrialConfig probe = config();
    if (script && probe.script.empty()) probe.script = "-";  // which knobs show does not need the path
    for (const auto& knob : config::knobs()) {
      KnobField* field = m_fields[knob.key];
      auto* rows = qobject_cast<QFormLayout*>(field->parentWidget()->layout());
      if (!rows || knob.group == "Where") continue;  // Where follows the launcher below
      const bool shown = knob.group == kScriptGroup ? script : !script || config::script_can_set(probe, knob.key);
      rows->setRowVisible(field, shown);
    }
    for (const auto& [group, box] : m_groups) {
      bool any = false;
      for (const auto& knob : config::knobs())
        if (knob.group == group && isFieldShown(QString::fromStdString(knob.key))) any = true;
      box->setVisible(any || group == "Where");
    }
  }
  const bool custom = m_fields["model"]->text() == "custom";
  for (const auto& k : config::model_dim_keys()) m_fields[k]->setEnabled(custom);
  const config::TrialConfig c = config();
  // The world size is not clamped to the devices: a preset for two GPUs on a one-GPU machine
  // must say why it cannot run, not silently become another trial.
  m_fields["data_path"]->setEnabled(c.data == config::DataSource::File);
  m_fields["token_dtype"]->setEnabled(c.data == config::DataSource::File);
  // A script's DDP is its own: its bucket size applies whenever it wraps the model in DDP.
  const bool ddp = c.strategy == config::Strategy::Ddp || script, fsdp = c.strategy == config::Strategy::Fsdp;
  for (const char* k : {"bucket_mb", "first_bucket_mb", "ddp_overlap", "compression"}) m_fields[k]->setEnabled(ddp);
  for (const char* k : {"fsdp_mode", "fsdp_prefetch", "fsdp_param_dtype", "fsdp_reduce_dtype"})
    m_fields[k]->setEnabled(fsdp);
  // The Where group shows what the chosen launcher uses (no SSH hosts for local ranks, no SLURM
  // fields over SSH, ...); hidden fields keep their values for when the choice comes back.
  for (const auto& knob : config::knobs()) {
    if (knob.group != "Where") continue;
    KnobField* field = m_fields[knob.key];
    if (auto* rows = qobject_cast<QFormLayout*>(field->parentWidget()->layout()))
      rows->setRowVisible(field, config::knob_applies(knob.key, c.launcher));
  }
}

bool TrialForm::isFieldShown(const QString& key) const {
  KnobField* f = field(key);
  if (!f) return false;
  auto* rows = qobject_cast<QFormLayout*>(f->parentWidget()->layout());
  return !rows || rows->isRowVisible(f);
}

std::vector<config::Problem> TrialForm::problems() const {
  config::TrialConfig c;
  std::vector<config::Problem> out = configProblems(&c);
  for (auto& p : device_problems(c, m_devices)) out.push_back(std::move(p));
  return out;
}

std::vector<config::Problem> TrialForm::configProblems(config::TrialConfig* parsed) const {
  std::vector<config::Problem> out;
  config::TrialConfig c;
  for (const auto& knob : config::knobs())
    if (auto it = m_fields.find(knob.key); it != m_fields.end())
      if (auto p = config::set_knob(c, knob.key, it->second->text().toStdString())) out.push_back(*p);
  if (isScriptMode() && c.script.empty()) out.push_back({"script", "choose your training script"});
  for (auto& p : config::validate(c)) out.push_back(std::move(p));
  if (parsed) *parsed = std::move(c);
  return out;
}

void TrialForm::revealFirstProblem() {
  QWidget* target = m_summary;
  for (const auto& knob : config::knobs()) {
    const auto it = m_fields.find(knob.key);
    if (it != m_fields.end() && !it->second->problem().isEmpty()) {
      target = it->second;
      break;
    }
  }
  for (QWidget* w = parentWidget(); w; w = w->parentWidget())
    if (auto* scroll = qobject_cast<QScrollArea*>(w)) {
      scroll->ensureWidgetVisible(target);
      break;
    }
  if (auto* field = qobject_cast<KnobField*>(target)) field->editor()->setFocus();
}

int TrialForm::validateAndShow() {
  const auto found = problems();
  std::map<std::string, QStringList> byKey;
  QStringList general;
  for (const auto& p : found) {
    // A problem of a hidden field (an SSH host list that no longer parses, the launcher now local)
    // is said in the summary, where it can be seen.
    if (m_fields.count(p.key) && isFieldShown(QString::fromStdString(p.key)))
      byKey[p.key] << QString::fromStdString(p.message);
    else if (const config::KnobInfo* k = config::find_knob(p.key); k && m_fields.count(p.key))
      general << QString::fromStdString(k->label + ": " + p.message);
    else
      general << QString::fromStdString(p.message);
  }
  for (auto& [key, field] : m_fields) {
    auto it = byKey.find(key);
    field->setProblem(it == byKey.end() ? QString() : it->second.join('\n'));
  }
  const config::TrialConfig c = config();
  const QString ready =
      config::is_script(c)
          ? QStringLiteral("%1 rank(s) of %2, %3 steps (%4 warm-up); applied: %5")
                .arg(c.world_size)
                .arg(QFileInfo(QString::fromStdString(c.script)).fileName())
                .arg(c.steps)
                .arg(c.warmup)
                .arg(c.script_knobs.empty() ? QStringLiteral("nothing (the script's own settings)")
                                            : QString::fromStdString(config::knob_text(c, "script_knobs")))
          : QStringLiteral("%1 rank(s) × %2 tokens per step, %3 steps (%4 warm-up)")
                .arg(c.world_size)
                .arg(c.tokens_per_rank_step())
                .arg(c.steps)
                .arg(c.warmup);
  m_summary->setText(found.empty()
                         ? ready
                         : QStringLiteral("<span style='color:%1'>%2 problem(s) to fix before running. %3</span>")
                               .arg(bad_color().name())
                               .arg(found.size())
                               .arg(general.join(' ').toHtmlEscaped()));
  return int(found.size());
}

void TrialForm::setDevices(const DeviceInventory& devices) {
  m_devices = devices;
  m_devicesLabel->setText(devices.summary());
  m_devicesLabel->setToolTip(devices.hasGpu() ? QString() : QStringLiteral("NVML: ") + devices.nvml_error);
  updateDependentFields();
  validateAndShow();
}

}  // namespace tunebench::ui

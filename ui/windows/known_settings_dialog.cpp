#include "ui/windows/known_settings_dialog.h"

#include <QDialogButtonBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QVBoxLayout>

#include "core/config/known_settings.h"
#include "core/config/trial_config.h"
#include "ui/windows/theme.h"

namespace tunebench::ui {

KnownSettingsDialog::KnownSettingsDialog(const QString& trialName, const nlohmann::json& config, bool editable,
                                         QWidget* parent)
    : QDialog(parent) {
  setObjectName(QStringLiteral("knownSettingsDialog"));
  setWindowTitle(QStringLiteral("Settings of %1").arg(trialName));
  auto* layout = new QVBoxLayout(this);
  auto* intro = new QLabel(
      editable ? QStringLiteral("<b>%1</b> was imported from torch.profiler traces. The trace shows some settings; "
                                "the others are <i>unknown</i>, and no figure or suggestion uses them. Fill in "
                                "the ones you know (Edit known settings), e.g. micro-batch and sequence length "
                                "for throughput.")
                     .arg(trialName.toHtmlEscaped())
               : QStringLiteral("<b>%1</b>: the configuration this trial ran with.").arg(trialName.toHtmlEscaped()));
  intro->setWordWrap(true);
  layout->addWidget(intro);

  const config::TrialConfig values = config::from_json(config).config;
  auto* page = new QWidget;
  auto* columns = new QVBoxLayout(page);
  std::map<std::string, QFormLayout*> groups;
  for (const auto& k : config::knobs()) {
    if (k.key == "name") continue;
    QFormLayout*& form = groups[k.group];
    if (!form) {
      // "Model & data": a group box title takes '&' for a shortcut; "&&" is the character.
      auto* box = new QGroupBox(QString::fromStdString(k.group).replace(QLatin1Char('&'), QStringLiteral("&&")));
      form = new QFormLayout(box);
      columns->addWidget(box);
    }
    auto* edit = new QLineEdit;
    edit->setObjectName(QStringLiteral("known_%1").arg(QString::fromStdString(k.key)));
    edit->setPlaceholderText(QStringLiteral("unknown"));
    QString tip = QString::fromStdString(k.help);
    if (!k.choices.empty()) {
      QStringList choices;
      for (const auto& c : k.choices) choices << QString::fromStdString(c);
      tip += QStringLiteral("\nOne of: %1").arg(choices.join(QStringLiteral(", ")));
    }
    edit->setToolTip(tip + QStringLiteral("\nKey: %1").arg(QString::fromStdString(k.key)));
    if (config::is_known(config, k.key)) {
      m_original[k.key] = QString::fromStdString(config::knob_text(values, k.key));
      edit->setText(m_original[k.key]);
    }
    edit->setReadOnly(true);
    const QString unit = k.unit.empty() ? QString() : QStringLiteral(" (%1)").arg(QString::fromStdString(k.unit));
    form->addRow(QString::fromStdString(k.label) + unit, edit);
    m_fields[k.key] = edit;
  }
  auto* scroll = new QScrollArea;
  scroll->setWidget(page);
  scroll->setWidgetResizable(true);
  layout->addWidget(scroll, 1);

  m_problems = new QLabel;
  m_problems->setObjectName(QStringLiteral("knownSettingsProblems"));
  m_problems->setWordWrap(true);
  m_problems->setStyleSheet(QStringLiteral("color: %1").arg(error_color().name()));  // readable in dark themes too
  m_problems->hide();
  layout->addWidget(m_problems);

  m_buttons = new QDialogButtonBox(QDialogButtonBox::Close);
  m_edit = m_buttons->addButton(QStringLiteral("Edit known settings"), QDialogButtonBox::ActionRole);
  m_edit->setObjectName(QStringLiteral("editKnownSettings"));
  m_edit->setEnabled(editable);
  if (!editable) m_edit->setToolTip(QStringLiteral("A trial run by Tunebench knows all its settings."));
  connect(m_edit, &QPushButton::clicked, this, [this] { setEditing(true); });
  connect(m_buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  connect(m_buttons, &QDialogButtonBox::accepted, this, [this] {
    if (changedSettings().isEmpty() && clearedKeys().isEmpty())
      accept();
    else
      emit saveRequested();
  });
  layout->addWidget(m_buttons);
  resize(520, 640);
}

void KnownSettingsDialog::setEditing(bool editing) {
  m_editing = editing;
  for (auto& [key, edit] : m_fields) edit->setReadOnly(!editing);
  m_edit->setVisible(!editing);
  m_buttons->setStandardButtons(editing ? QDialogButtonBox::Save | QDialogButtonBox::Cancel : QDialogButtonBox::Close);
}

QLineEdit* KnownSettingsDialog::field(const QString& key) const {
  const auto it = m_fields.find(key.toStdString());
  return it == m_fields.end() ? nullptr : it->second;
}

QStringList KnownSettingsDialog::changedSettings() const {
  QStringList out;
  for (const auto& [key, edit] : m_fields) {
    const QString text = edit->text().trimmed();
    const auto known = m_original.find(key);
    if (!text.isEmpty() && (known == m_original.end() || known->second != text))
      out << QString::fromStdString(key) + QLatin1Char('=') + text;
  }
  return out;
}

QStringList KnownSettingsDialog::clearedKeys() const {
  QStringList out;
  for (const auto& [key, value] : m_original)
    if (m_fields.at(key)->text().trimmed().isEmpty()) out << QString::fromStdString(key);
  return out;
}

void KnownSettingsDialog::showProblems(const QString& text) {
  m_problems->setText(text);
  m_problems->setVisible(!text.isEmpty());
}

}  // namespace tunebench::ui

#include "ui/windows/knob_field.h"

#include <limits>

#include <QCheckBox>
#include <QComboBox>
#include <QEvent>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QSpinBox>
#include <QStyle>
#include <QVBoxLayout>

#include "ui/models/status_colors.h"

namespace tunebench::ui {

using config::KnobType;

namespace {
// A count's unit agrees with it: "1 process", "2 processes", "1 micro-step". Units that are not
// plural nouns ("ms", "MiB") stay as they are.
QString unit_for(const std::string& unit, long long value) {
  QString u = QString::fromStdString(unit);
  if (value != 1 || u.size() < 4 || !u.endsWith(QLatin1Char('s'))) return u;
  return u.endsWith(QStringLiteral("sses")) ? u.chopped(2) : u.chopped(1);
}
}  // namespace

QString KnobField::tooltipFor(const config::KnobInfo& knob) {
  QString tip =
      QStringLiteral("<p><b>%1</b> <code>--%2</code></p><p>%3</p>")
          .arg(QString::fromStdString(knob.label).toHtmlEscaped(), QString::fromStdString(knob.key).replace('_', '-'),
               QString::fromStdString(knob.help).toHtmlEscaped());
  if (!knob.forum_claim.empty())
    tip += QStringLiteral("<p><i>Tests the forum claim:</i> %1</p>")
               .arg(QString::fromStdString(knob.forum_claim).toHtmlEscaped());
  return tip;
}

KnobField::KnobField(const config::KnobInfo& knob, QWidget* parent) : QWidget(parent), m_knob(knob) {
  setObjectName(QStringLiteral("knob_") + key());
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(1);
  switch (knob.type) {
    case KnobType::Int:
      if (knob.key == "seed") {  // 64-bit: a spin box would clip it
        auto* edit = new QLineEdit(this);
        connect(edit, &QLineEdit::textEdited, this, &KnobField::edited);
        m_editor = edit;
      } else {
        auto* spin = new QSpinBox(this);
        spin->setRange(0, std::numeric_limits<int>::max());
        spin->setGroupSeparatorShown(true);
        if (!knob.unit.empty()) {
          spin->setSuffix(QStringLiteral(" ") + unit_for(knob.unit, spin->value()));
          connect(spin, &QSpinBox::valueChanged, spin, [spin, unit = knob.unit](int v) {
            spin->setSuffix(QStringLiteral(" ") + unit_for(unit, v));
          });
        }
        connect(spin, &QSpinBox::valueChanged, this, &KnobField::edited);
        m_editor = spin;
      }
      break;
    case KnobType::Bool: {
      auto* box = new QCheckBox(this);
      connect(box, &QCheckBox::toggled, this, &KnobField::edited);
      m_editor = box;
      break;
    }
    case KnobType::Choice: {
      auto* combo = new QComboBox(this);
      for (const auto& c : knob.choices) combo->addItem(QString::fromStdString(c));
      connect(combo, &QComboBox::currentIndexChanged, this, &KnobField::edited);
      m_editor = combo;
      break;
    }
    case KnobType::Float:
    case KnobType::Text:
    case KnobType::Map: {
      auto* edit = new QLineEdit(this);
      if (knob.type == KnobType::Map) edit->setPlaceholderText(QStringLiteral("NCCL_ALGO=Ring,NCCL_P2P_DISABLE=1"));
      if (knob.type == KnobType::Float && !knob.unit.empty())
        edit->setPlaceholderText(QString::fromStdString(knob.unit));
      connect(edit, &QLineEdit::textEdited, this, &KnobField::edited);
      m_editor = edit;
      break;
    }
  }
  m_editor->setObjectName(QStringLiteral("editor"));
  m_editor->setToolTip(tooltipFor(knob));
  // A line edit shows its unit beside it (a placeholder disappears as soon as there is a value).
  if (!knob.unit.empty() && qobject_cast<QLineEdit*>(m_editor)) {
    auto* row = new QHBoxLayout;
    row->setContentsMargins(0, 0, 0, 0);
    row->setSpacing(4);
    row->addWidget(m_editor, 1);
    auto* unit = new QLabel(QString::fromStdString(knob.unit), this);
    unit->setObjectName(QStringLiteral("unit"));
    row->addWidget(unit);
    layout->addLayout(row);
  } else {
    layout->addWidget(m_editor);
  }
  m_message = new QLabel(this);
  m_message->setObjectName(QStringLiteral("problem"));
  m_message->setWordWrap(true);
  QFont small = m_message->font();
  small.setPointSizeF(small.pointSizeF() * 0.9);
  m_message->setFont(small);
  m_message->setForegroundRole(QPalette::BrightText);  // restyled with the theme (changeEvent)
  applyProblemColor();
  m_message->setVisible(false);
  layout->addWidget(m_message);
}

QString KnobField::text() const {
  if (auto* spin = qobject_cast<QSpinBox*>(m_editor)) return QString::number(spin->value());
  if (auto* box = qobject_cast<QCheckBox*>(m_editor)) return box->isChecked() ? "true" : "false";
  if (auto* combo = qobject_cast<QComboBox*>(m_editor)) return combo->currentText();
  if (auto* edit = qobject_cast<QLineEdit*>(m_editor)) return edit->text().trimmed();
  return {};
}

void KnobField::setText(const QString& text) {
  const QSignalBlocker block(m_editor);  // programmatic changes are not user edits
  if (auto* spin = qobject_cast<QSpinBox*>(m_editor)) {
    spin->setValue(text.toInt());
    if (!m_knob.unit.empty()) spin->setSuffix(QStringLiteral(" ") + unit_for(m_knob.unit, spin->value()));
  } else if (auto* box = qobject_cast<QCheckBox*>(m_editor))
    box->setChecked(text == "true");
  else if (auto* combo = qobject_cast<QComboBox*>(m_editor))
    combo->setCurrentText(text);
  else if (auto* edit = qobject_cast<QLineEdit*>(m_editor))
    edit->setText(text);
}

void KnobField::applyProblemColor() {
  QPalette p = m_message->palette();
  p.setColor(QPalette::BrightText, bad_color());
  m_message->setPalette(p);
}

void KnobField::changeEvent(QEvent* event) {
  if (event->type() == QEvent::PaletteChange && m_message) applyProblemColor();
  QWidget::changeEvent(event);
}

void KnobField::setProblem(const QString& message) {
  if (message == m_problem) return;
  m_problem = message;
  m_message->setText(message);
  m_message->setVisible(!message.isEmpty());
  // A dynamic property, so the red outline comes from one style sheet rule (see TrialForm).
  m_editor->setProperty("invalid", !message.isEmpty());
  m_editor->style()->unpolish(m_editor);
  m_editor->style()->polish(m_editor);
}

}  // namespace tunebench::ui

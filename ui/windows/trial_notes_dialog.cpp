#include "ui/windows/trial_notes_dialog.h"

#include <QDialogButtonBox>
#include <QFormLayout>
#include <QLineEdit>
#include <QPlainTextEdit>

namespace tunebench::ui {

TrialNotesDialog::TrialNotesDialog(const QString& trialName, const QString& notes, const QStringList& tags, QWidget* parent)
    : QDialog(parent), m_notes(new QPlainTextEdit(notes)), m_tags(new QLineEdit(tags.join(QStringLiteral(", ")))) {
  setObjectName(QStringLiteral("trialNotesDialog"));
  setWindowTitle(QStringLiteral("Annotate %1").arg(trialName));
  m_notes->setObjectName(QStringLiteral("notesEdit"));
  m_tags->setObjectName(QStringLiteral("tagsEdit"));
  m_tags->setPlaceholderText(QStringLiteral("e.g. baseline, no-p2p, needs-rerun"));
  auto* form = new QFormLayout(this);
  form->addRow(QStringLiteral("Notes:"), m_notes);
  form->addRow(QStringLiteral("Tags (comma-separated):"), m_tags);
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel);
  connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  form->addRow(buttons);
  resize(520, 320);
}

QString TrialNotesDialog::notes() const { return m_notes->toPlainText(); }

QStringList TrialNotesDialog::tags() const {
  QStringList out;
  for (const QString& t : m_tags->text().split(QLatin1Char(','), Qt::SkipEmptyParts))
    if (!t.trimmed().isEmpty()) out << t.trimmed();
  return out;
}

}  // namespace tunebench::ui

// Annotating a trial: free notes and comma-separated tags, stored with the trial in the session.
#pragma once

#include <QDialog>
#include <QStringList>

class QLineEdit;
class QPlainTextEdit;

namespace tunebench::ui {

class TrialNotesDialog : public QDialog {
  Q_OBJECT
 public:
  TrialNotesDialog(const QString& trialName, const QString& notes, const QStringList& tags, QWidget* parent = nullptr);
  QString notes() const;
  QStringList tags() const;

 private:
  QPlainTextEdit* m_notes;
  QLineEdit* m_tags;
};

}  // namespace tunebench::ui

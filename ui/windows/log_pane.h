// LogPane: stdout, stderr and log events of every rank, plus the runner's own lines.
// Lines are buffered and appended a few times a second: a chatty rank must not cost a repaint
// per line.
#pragma once

#include <QPlainTextEdit>
#include <QStringList>

#include "ui/runner/runner_types.h"

class QTimer;

namespace tunebench::ui {

class LogPane : public QPlainTextEdit {
  Q_OBJECT
 public:
  static constexpr int kMaxLines = 20000;

  explicit LogPane(QWidget* parent = nullptr);

  void appendLine(const LogLine& line);
  void appendError(const QString& text);  // highlighted (a trial failed)
  void appendNote(const QString& text);   // the window's own line (a session's import, say)
  void flush();
  // Starts over (another session): nothing of the previous one stays, pending lines included.
  void restart(const QString& firstLine);
  static QString format(const LogLine& line);
  // A worker's stderr line that reports a problem ("error", "exception", "out of memory", ...).
  static bool looksLikeAnError(const QString& text);

 private:
  QStringList m_pending;  // HTML fragments
  QTimer* m_timer;
};

}  // namespace tunebench::ui

#include "ui/windows/log_pane.h"

#include <QFontDatabase>
#include <QScrollBar>
#include <QTimer>

#include "ui/models/status_colors.h"

namespace tunebench::ui {

LogPane::LogPane(QWidget* parent) : QPlainTextEdit(parent), m_timer(new QTimer(this)) {
  setObjectName(QStringLiteral("logPane"));
  setReadOnly(true);
  setMaximumBlockCount(kMaxLines);
  setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  setLineWrapMode(QPlainTextEdit::NoWrap);
  m_timer->setSingleShot(true);
  m_timer->setInterval(100);
  connect(m_timer, &QTimer::timeout, this, &LogPane::flush);
}

QString LogPane::format(const LogLine& line) {
  QString prefix;
  switch (line.source) {
    // The worker writes its human log to stderr by design (stdout belongs to NCCL and libtorch),
    // so a stderr line is the rank's log, not an error; errors come as events and exit codes.
    case LogLine::Source::Stdout:
      prefix = QStringLiteral("[rank %1 stdout] ").arg(line.rank);
      break;
    case LogLine::Source::Stderr:
      prefix = QStringLiteral("[rank %1] ").arg(line.rank);
      break;
    case LogLine::Source::Event:
      prefix = QStringLiteral("[rank %1] ").arg(line.rank);
      break;
    case LogLine::Source::Runner:
      prefix = QStringLiteral("[tunebench] ");
      break;
  }
  return prefix + line.text;
}

bool LogPane::looksLikeAnError(const QString& text) {
  static const QStringList words = {
      QStringLiteral("error"),        QStringLiteral("exception"),        QStringLiteral("traceback"),
      QStringLiteral("fatal"),        QStringLiteral("terminate called"), QStringLiteral("segmentation fault"),
      QStringLiteral("out of memory")};
  for (const QString& w : words)
    if (text.contains(w, Qt::CaseInsensitive)) return true;
  return false;
}

void LogPane::appendLine(const LogLine& line) {
  const QString text = format(line).toHtmlEscaped();
  const bool quiet = line.source == LogLine::Source::Stdout;
  // Only a stderr line that reads like an error is coloured as one.
  if (line.source == LogLine::Source::Stderr && looksLikeAnError(line.text))
    m_pending << QStringLiteral("<span style='color:%1'>%2</span>").arg(bad_color().name(), text);
  else
    m_pending << (quiet ? QStringLiteral("<span style='color:gray'>%1</span>").arg(text) : text);
  if (!m_timer->isActive()) m_timer->start();
}

void LogPane::appendError(const QString& text) {
  m_pending << QStringLiteral("<span style='color:%1; font-weight:bold'>%2</span>")
                   .arg(bad_color().name(), text.toHtmlEscaped().replace('\n', "<br>"));
  if (!m_timer->isActive()) m_timer->start();
}

void LogPane::appendNote(const QString& text) { appendLine({-1, LogLine::Source::Runner, text}); }

void LogPane::restart(const QString& firstLine) {
  m_pending.clear();
  clear();
  if (!firstLine.isEmpty()) appendNote(firstLine);
}

void LogPane::flush() {
  if (m_pending.isEmpty()) return;
  QScrollBar* bar = verticalScrollBar();
  const bool atEnd = bar->value() == bar->maximum();
  for (const QString& html : std::as_const(m_pending)) appendHtml(html);
  m_pending.clear();
  if (atEnd) bar->setValue(bar->maximum());
}

}  // namespace tunebench::ui

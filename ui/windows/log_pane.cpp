#include "ui/windows/log_pane.h"

#include <QFontDatabase>
#include <QScrollBar>
#include <QTimer>

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
    case LogLine::Source::Stdout: prefix = QStringLiteral("[rank %1 out] ").arg(line.rank); break;
    case LogLine::Source::Stderr: prefix = QStringLiteral("[rank %1 err] ").arg(line.rank); break;
    case LogLine::Source::Event: prefix = QStringLiteral("[rank %1] ").arg(line.rank); break;
    case LogLine::Source::Runner: prefix = QStringLiteral("[tunebench] "); break;
  }
  return prefix + line.text;
}

void LogPane::appendLine(const LogLine& line) {
  const QString text = format(line).toHtmlEscaped();
  const bool quiet = line.source == LogLine::Source::Stdout;
  m_pending << (quiet ? QStringLiteral("<span style='color:gray'>%1</span>").arg(text) : text);
  if (!m_timer->isActive()) m_timer->start();
}

void LogPane::appendError(const QString& text) {
  m_pending << QStringLiteral("<span style='color:#c62828; font-weight:bold'>%1</span>").arg(text.toHtmlEscaped().replace('\n', "<br>"));
  if (!m_timer->isActive()) m_timer->start();
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

#include "ui/windows/start_page.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QLabel>
#include <QListWidget>
#include <QPointer>
#include <QPushButton>
#include <QVBoxLayout>

#include "core/store/session_store.h"
#include "ui/runner/background_jobs.h"

#ifndef TUNEBENCH_SESSIONS_DIR
#define TUNEBENCH_SESSIONS_DIR ""
#endif

namespace tunebench::ui {

QString examples_dir(const QString& applicationDir) {
  const QString installed = QDir(applicationDir).filePath(QStringLiteral("../share/tunebench/sessions"));
  if (QFileInfo(installed).isDir()) return QDir(installed).canonicalPath();
  const QString source = QStringLiteral(TUNEBENCH_SESSIONS_DIR);
  if (!source.isEmpty() && QFileInfo(source).isDir()) return source;
  return {};
}

QList<ExampleSession> list_examples(const QString& dir) {
  QList<ExampleSession> out;
  if (dir.isEmpty()) return out;
  for (const QFileInfo& f : QDir(dir).entryInfoList({QStringLiteral("*.tbsession")}, QDir::Files, QDir::Name)) {
    ExampleSession e;
    e.path = f.absoluteFilePath();
    e.name = f.completeBaseName();
    try {
      const store::SessionStore s = store::SessionStore::open(e.path.toStdString(), {store::SessionStore::Mode::ReadOnly});
      const store::SessionInfo info = s.info();
      if (!info.name.empty()) e.name = QString::fromStdString(info.name);
      e.description = QString::fromStdString(info.notes);
      e.trials = int(s.list_trials().size());
    } catch (const std::exception& error) {
      e.description = QStringLiteral("Cannot be opened: %1").arg(QString::fromStdString(error.what()));
    }
    out << e;
  }
  return out;
}

StartPage::StartPage(QWidget* parent) : QWidget(parent), m_examples(new QListWidget), m_recent(new QListWidget) {
  setObjectName(QStringLiteral("startPage"));
  m_examples->setObjectName(QStringLiteral("examplesList"));
  m_recent->setObjectName(QStringLiteral("recentList"));
  m_examples->setWordWrap(true);
  m_examples->setSpacing(4);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(32, 24, 32, 24);
  auto* title = new QLabel(QStringLiteral("<h2>Tunebench</h2><p>Configure a trial on the left and press <b>Run</b> "
                                          "(Ctrl+R), or open a session measured before. Example sessions open as a "
                                          "copy: your runs and edits go to the copy, the shipped file stays as it is.</p>"));
  title->setWordWrap(true);
  layout->addWidget(title);
  auto* newTrial = new QPushButton(QStringLiteral("Configure a trial"));
  newTrial->setObjectName(QStringLiteral("startNewTrial"));
  connect(newTrial, &QPushButton::clicked, this, &StartPage::newTrialRequested);
  layout->addWidget(newTrial, 0, Qt::AlignLeft);
  layout->addWidget(new QLabel(QStringLiteral("<b>Example sessions</b> (double-click to open)")));
  layout->addWidget(m_examples, 3);
  layout->addWidget(new QLabel(QStringLiteral("<b>Recent sessions</b>")));
  layout->addWidget(m_recent, 1);
  connect(m_examples, &QListWidget::itemActivated, this,
          [this](QListWidgetItem* item) { emit exampleActivated(item->data(Qt::UserRole).toString()); });
  connect(m_recent, &QListWidget::itemActivated, this,
          [this](QListWidgetItem* item) { emit recentActivated(item->data(Qt::UserRole).toString()); });
}

void StartPage::setExamples(const QList<ExampleSession>& examples) {
  m_examples->clear();
  for (const ExampleSession& e : examples) {
    auto* item = new QListWidgetItem(QStringLiteral("%1  (%2 trials)\n%3").arg(e.name).arg(e.trials).arg(e.description), m_examples);
    item->setData(Qt::UserRole, e.path);
    item->setToolTip(e.path);
  }
  if (examples.isEmpty()) {
    auto* none = new QListWidgetItem(QStringLiteral("No example sessions found (sessions/ beside the program)."), m_examples);
    none->setFlags(Qt::NoItemFlags);
  }
}

void StartPage::listExamples(BackgroundJobs* jobs) {
  jobs->submit(QStringLiteral("Listing the example sessions"), [page = QPointer<StartPage>(this)](JobProgress&) {
    auto examples = list_examples(examples_dir(QCoreApplication::applicationDirPath()));
    return [page, examples] {
      if (page) page->setExamples(examples);
    };
  });
}

void StartPage::setRecent(const QStringList& paths) {
  m_recent->clear();
  for (const QString& p : paths) {
    auto* item = new QListWidgetItem(QStringLiteral("%1 — %2").arg(QFileInfo(p).fileName(), QFileInfo(p).absolutePath()), m_recent);
    item->setData(Qt::UserRole, p);
  }
}

}  // namespace tunebench::ui

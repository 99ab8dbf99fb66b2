// StartPage: what the centre of the window shows while the session has no trial (and from
// Help > Examples): the example sessions shipped in sessions/ with their descriptions, and the
// recently used sessions. Activating an entry emits a signal; the window decides how to open it.
#pragma once

#include <QString>
#include <QStringList>
#include <QWidget>

class QListWidget;
class QListWidgetItem;

namespace tunebench::ui {

class BackgroundJobs;

struct ExampleSession {
  QString path;
  QString name;         // the session's name
  QString description;  // the session's notes
  int trials = 0;
};

// The folder of example sessions: share/tunebench/sessions beside an installed binary, else the
// source tree's sessions/ (TUNEBENCH_SESSIONS_DIR, set at build time). Empty when neither exists.
QString examples_dir(const QString& applicationDir);
// Every *.tbsession in `dir`, read through the store (read-only; an unreadable file is listed
// with the store's reason as its description, never opened).
QList<ExampleSession> list_examples(const QString& dir);

class StartPage : public QWidget {
  Q_OBJECT
 public:
  explicit StartPage(QWidget* parent = nullptr);

  void setExamples(const QList<ExampleSession>& examples);
  // Lists the examples (examples_dir beside the application) as a job on `jobs`: each is opened
  // and checked to describe it, like every session read. They are shown when the job ends.
  void listExamples(BackgroundJobs* jobs);
  void setRecent(const QStringList& paths);
  QListWidget* examplesList() const { return m_examples; }
  QListWidget* recentList() const { return m_recent; }

 signals:
  void exampleActivated(const QString& path);
  void recentActivated(const QString& path);
  void newTrialRequested();

 private:
  QListWidget* m_examples;
  QListWidget* m_recent;
};

}  // namespace tunebench::ui

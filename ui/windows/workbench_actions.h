// WorkbenchActions: the window's own actions (Run, Queue, Stop, Stop and clear queue, Validate,
// Replay event log, Export plots, Quit) with their shortcuts, tips and file dialogs, and the menu bar and tool
// bar that place them beside the parts' own entries: the session's File menu and stored-trial
// entries, the link probe, the views' and docks' toggles, the Analysis menu. What the actions do
// is wired by the window; menus and actions keep their object names (menuTrial, actionRun, ...),
// by which tests and the window find them.
#pragma once

#include <functional>

#include <QList>
#include <QObject>

class QAction;
class QMainWindow;
class QMenu;

namespace tunebench::ui {

class WorkbenchActions : public QObject {
  Q_OBJECT
 public:
  // What the other parts bring to the menus.
  struct Parts {
    QMenu* file = nullptr;               // the session's entries; Replay, Export and Quit follow
    QList<QAction*> trialEntries;        // after the window's Trial entries: a stored trial's
    QAction* measureLink = nullptr;      // Trial > Measure the link…
    QList<QAction*> viewEntries;         // View: the timeline's
    QList<QAction*> dockToggles;         // View: show / hide each dock
    QMenu* analysis = nullptr;           // before Help
    QAction* examples = nullptr;         // Help > Examples
    std::function<QString()> exportDir;  // where Export plots' dialog starts
  };

  explicit WorkbenchActions(QMainWindow* window);

  QAction* run() const { return m_run; }
  QAction* queue() const { return m_queue; }
  QAction* stop() const { return m_stop; }
  QAction* stopAll() const { return m_stopAll; }
  QAction* validate() const { return m_validate; }
  QAction* replay() const { return m_replay; }
  QAction* exportPlots() const { return m_export; }
  QAction* quit() const { return m_quit; }
  // Run, Stop and Replay are enabled by whether a trial runs.
  void setBusy(bool busy);

  // File, Trial, View (with Theme), Analysis, Help and the Trial tool bar.
  void buildMenus(const Parts& parts);

 signals:
  // Replay event log… and Export plots… ask for a file (window-modal, not blocking) and say which.
  void replayChosen(const QString& path);
  void exportChosen(const QString& path);

 private:
  QMainWindow* m_window;
  std::function<QString()> m_exportDir;
  QAction* m_run;
  QAction* m_queue;
  QAction* m_stop;
  QAction* m_stopAll;
  QAction* m_validate;
  QAction* m_replay;
  QAction* m_export;
  QAction* m_quit;
};

}  // namespace tunebench::ui

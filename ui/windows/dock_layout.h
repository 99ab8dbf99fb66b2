// DockLayout: where the workbench's docks go and the share of the window each keeps. The trial
// form on the left, the trials and the log side by side at the bottom, further docks (the
// prediction) under the form; forms scroll inside their docks. When the window grows, the docks
// grow back to their share instead of leaving every new pixel to the centre (and saving that).
#pragma once

#include <QList>
#include <QObject>

class QAction;
class QDockWidget;
class QMainWindow;
class QWidget;

namespace tunebench::ui {

class DockLayout : public QObject {
  Q_OBJECT
 public:
  explicit DockLayout(QMainWindow* window);

  // "Trial" (trialDock) on the left, scrolling.
  QDockWidget* addForm(QWidget* form);
  // "Trials" (trialsDock) and "Log" (logDock) side by side at the bottom.
  void addBottom(QWidget* trials, QWidget* log);
  // A dock under the form, scrolling (e.g. "Prediction", predictionDock).
  QDockWidget* addBelowForm(const QString& title, const QString& objectName, QWidget* content);
  // Every dock's show/hide action, in the order they were added (the View menu).
  QList<QAction*> toggleActions() const;
  // The docks back to their share of the window when they were squeezed below it.
  void keepShares();

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override;  // the window's resizes

 private:
  QMainWindow* m_window;
  QDockWidget* m_form = nullptr;
  QDockWidget* m_trials = nullptr;
  QList<QDockWidget*> m_docks;
};

}  // namespace tunebench::ui

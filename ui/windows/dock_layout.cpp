#include "ui/windows/dock_layout.h"

#include <algorithm>

#include <QDockWidget>
#include <QEvent>
#include <QMainWindow>
#include <QScrollArea>
#include <QTimer>

namespace tunebench::ui {

namespace {
constexpr double kBottomDockShare = 0.22;  // of the window's height, the trials and log docks
constexpr int kFormDockWidth = 380;

QScrollArea* scrolling(QWidget* content) {
  auto* scroll = new QScrollArea;
  scroll->setWidget(content);
  scroll->setWidgetResizable(true);
  scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  return scroll;
}
}  // namespace

DockLayout::DockLayout(QMainWindow* window) : QObject(window), m_window(window) {
  setObjectName(QStringLiteral("dockLayout"));
  m_window->setDockNestingEnabled(true);
  m_window->installEventFilter(this);
}

QDockWidget* DockLayout::addForm(QWidget* form) {
  m_form = new QDockWidget(QStringLiteral("Trial"), m_window);
  m_form->setObjectName(QStringLiteral("trialDock"));
  m_form->setWidget(scrolling(form));
  m_form->setMinimumWidth(340);
  m_window->addDockWidget(Qt::LeftDockWidgetArea, m_form);
  m_docks << m_form;
  return m_form;
}

void DockLayout::addBottom(QWidget* trials, QWidget* log) {
  m_trials = new QDockWidget(QStringLiteral("Trials"), m_window);
  m_trials->setObjectName(QStringLiteral("trialsDock"));
  m_trials->setWidget(trials);
  m_window->addDockWidget(Qt::BottomDockWidgetArea, m_trials);
  auto* logDock = new QDockWidget(QStringLiteral("Log"), m_window);
  logDock->setObjectName(QStringLiteral("logDock"));
  logDock->setWidget(log);
  m_window->addDockWidget(Qt::BottomDockWidgetArea, logDock);
  m_window->splitDockWidget(m_trials, logDock, Qt::Horizontal);
  m_window->resizeDocks({m_trials}, {230}, Qt::Vertical);
  m_window->resizeDocks({m_trials, logDock}, {2, 1}, Qt::Horizontal);  // the table's columns and reasons need the room
  if (m_form) m_window->resizeDocks({m_form}, {kFormDockWidth}, Qt::Horizontal);
  m_docks << m_trials << logDock;
}

QDockWidget* DockLayout::addBelowForm(const QString& title, const QString& objectName, QWidget* content) {
  auto* dock = new QDockWidget(title, m_window);
  dock->setObjectName(objectName);
  dock->setWidget(scrolling(content));
  m_window->addDockWidget(Qt::LeftDockWidgetArea, dock);
  if (m_form) m_window->splitDockWidget(m_form, dock, Qt::Vertical);
  m_docks << dock;
  return dock;
}

QList<QAction*> DockLayout::toggleActions() const {
  QList<QAction*> actions;
  for (QDockWidget* dock : m_docks) actions << dock->toggleViewAction();
  return actions;
}

void DockLayout::keepShares() {
  const int height = m_window->height(), width = m_window->width();
  if (m_trials && m_trials->isVisible() && !m_trials->isFloating() &&
      m_trials->height() < int(height * kBottomDockShare) - 8)
    m_window->resizeDocks({m_trials}, {int(height * kBottomDockShare)}, Qt::Vertical);
  if (m_form && m_form->isVisible() && !m_form->isFloating() && m_form->width() < std::min(kFormDockWidth, width / 4))
    m_window->resizeDocks({m_form}, {std::min(kFormDockWidth, width / 4)}, Qt::Horizontal);
}

bool DockLayout::eventFilter(QObject* watched, QEvent* event) {
  // After the layout settled: a window grown from a small size would otherwise give every new
  // pixel to the centre and leave the docks at their squeezed size.
  if (watched == m_window && event->type() == QEvent::Resize) QTimer::singleShot(0, this, &DockLayout::keepShares);
  return QObject::eventFilter(watched, event);
}

}  // namespace tunebench::ui

#include "ui/windows/workbench_actions.h"

#include <QAction>
#include <QDir>
#include <QFileDialog>
#include <QMainWindow>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QToolBar>

#include "ui/windows/dialog_front.h"
#include "ui/windows/theme.h"

namespace tunebench::ui {

namespace {
QAction* make(QMainWindow* window, const char* name, const QString& text, const QKeySequence& key, const QString& tip) {
  auto* a = new QAction(text, window);
  a->setObjectName(QString::fromLatin1(name));
  a->setShortcut(key);
  a->setToolTip(QStringLiteral("%1 (%2)").arg(tip, key.toString(QKeySequence::NativeText)));
  a->setStatusTip(tip);
  return a;
}
}  // namespace

WorkbenchActions::WorkbenchActions(QMainWindow* window) : QObject(window), m_window(window) {
  setObjectName(QStringLiteral("workbenchActions"));
  m_run = make(window, "actionRun", QStringLiteral("&Run"), QKeySequence(Qt::CTRL | Qt::Key_R),
               QStringLiteral("Validate the form and run the trial"));
  m_queue = make(window, "actionQueue", QStringLiteral("&Queue"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_R),
                 QStringLiteral("Add the trial to the queue; it runs after the current one"));
  m_stop = make(window, "actionStop", QStringLiteral("&Stop"), QKeySequence(Qt::CTRL | Qt::Key_Period),
                QStringLiteral("Stop the running trial (all ranks)"));
  m_stopAll = make(window, "actionStopAll", QStringLiteral("Stop and clear &queue"),
                   QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_Period),
                   QStringLiteral("Stop the running trial and drop the queued ones"));
  m_validate = make(window, "actionValidate", QStringLiteral("&Validate"), QKeySequence(Qt::CTRL | Qt::Key_Return),
                    QStringLiteral("Check the form without running"));
  m_replay = make(window, "actionReplay", QStringLiteral("&Replay event log…"), QKeySequence(Qt::CTRL | Qt::Key_O),
                  QStringLiteral("Play a recorded .jsonl event log into the live views"));
  m_export = make(window, "actionExport", QStringLiteral("&Export plots…"), QKeySequence(Qt::CTRL | Qt::Key_E),
                  QStringLiteral("Save the timeline, step-time and telemetry plots as PNG, PDF or SVG"));
  m_quit = make(window, "actionQuit", QStringLiteral("&Quit"), QKeySequence(QKeySequence::Quit),
                QStringLiteral("Stop everything and quit"));
  connect(m_replay, &QAction::triggered, this, [this] {
    auto* d = new QFileDialog(m_window, QStringLiteral("Replay event log"), {},
                              QStringLiteral("Event logs (*.jsonl);;All files (*)"));
    d->setFileMode(QFileDialog::ExistingFile);
    d->setAttribute(Qt::WA_DeleteOnClose);
    connect(d, &QFileDialog::fileSelected, this, &WorkbenchActions::replayChosen);
    open_in_front(d);
  });
  connect(m_export, &QAction::triggered, this, [this] {
    const QString dir = m_exportDir ? m_exportDir() : QString();
    auto* d =
        new QFileDialog(m_window, QStringLiteral("Export plots"), QDir(dir).filePath(QStringLiteral("timeline.png")),
                        QStringLiteral("PNG image (*.png);;PDF document (*.pdf);;SVG drawing (*.svg)"));
    d->setAcceptMode(QFileDialog::AcceptSave);
    d->setAttribute(Qt::WA_DeleteOnClose);
    connect(d, &QFileDialog::fileSelected, this, &WorkbenchActions::exportChosen);
    open_in_front(d);
  });
}

void WorkbenchActions::setBusy(bool busy) {
  m_stop->setEnabled(busy);
  m_run->setEnabled(!busy);
  m_replay->setEnabled(!busy);
}

void WorkbenchActions::buildMenus(const Parts& parts) {
  m_exportDir = parts.exportDir;
  QMenuBar* bar = m_window->menuBar();
  if (parts.file) {
    parts.file->setParent(m_window, parts.file->windowFlags());
    bar->addMenu(parts.file);
    parts.file->addSeparator();
    parts.file->addAction(m_replay);
    parts.file->addAction(m_export);
    parts.file->addSeparator();
    parts.file->addAction(m_quit);
  }

  QMenu* trial = bar->addMenu(QStringLiteral("&Trial"));
  trial->setObjectName(QStringLiteral("menuTrial"));
  trial->addActions({m_run, m_queue, m_stop, m_stopAll, m_validate});
  if (parts.measureLink) trial->addAction(parts.measureLink);
  trial->addSeparator();
  trial->addActions(parts.trialEntries);

  QMenu* view = bar->addMenu(QStringLiteral("&View"));
  view->setObjectName(QStringLiteral("menuView"));
  view->addActions(parts.viewEntries);
  m_window->addActions(parts.viewEntries);  // shortcuts work wherever the focus is
  view->addSeparator();
  QMenu* themes = view->addMenu(QStringLiteral("&Theme"));
  themes->setObjectName(QStringLiteral("menuTheme"));
  themes->addActions(theme_actions(m_window));
  view->addSeparator();
  view->addActions(parts.dockToggles);

  if (parts.analysis) bar->addMenu(parts.analysis);
  QMenu* help = bar->addMenu(QStringLiteral("&Help"));
  help->setObjectName(QStringLiteral("menuHelp"));
  if (parts.examples) help->addAction(parts.examples);
  help->addAction(QStringLiteral("&About Tunebench"), m_window, [this] {
    // Not QMessageBox::about: that one blocks the application until answered.
    auto* box = new QMessageBox(QMessageBox::Information, QStringLiteral("About Tunebench"),
                                QStringLiteral("<b>Tunebench</b> runs short, instrumented training trials and shows "
                                               "where every millisecond of a step goes."),
                                QMessageBox::Ok, m_window);
    box->setAttribute(Qt::WA_DeleteOnClose);
    open_in_front(box);
  });

  QToolBar* tools = m_window->addToolBar(QStringLiteral("Trial"));
  tools->setObjectName(QStringLiteral("trialToolBar"));
  tools->setToolButtonStyle(Qt::ToolButtonTextOnly);
  tools->addActions({m_run, m_queue, m_stop});
  tools->addSeparator();
  tools->addAction(m_replay);
}

}  // namespace tunebench::ui

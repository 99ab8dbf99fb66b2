// A window-modal dialog blocks its window until answered, so it must be seen: shown, raised above
// the window and given the focus (without a window manager, or behind another top-level window,
// an unraised one left every click ignored). Every window-modal dialog opens through this;
// questions that may wait (the launch preview) are not modal at all.
#pragma once

#include <QDialog>

namespace tunebench::ui {

inline void open_in_front(QDialog* dialog) {
  dialog->open();  // window-modal, returns at once: a run in progress keeps being drawn
  dialog->raise();
  dialog->activateWindow();
}

}  // namespace tunebench::ui

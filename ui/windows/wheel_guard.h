// The mouse wheel over a form scrolls the form. Qt gives the wheel to whatever spin box or combo
// box is under the pointer, so scrolling a long form changed the values it passed over (Ranks
// went 1 -> 0). Guarded fields take the wheel only once they have the focus (a click, or Tab);
// otherwise the wheel goes on to the scroll area around them.
#pragma once

class QWidget;

namespace tunebench::ui {

// Guards every spin box and combo box under `root` (and `root` itself), now and not later: call
// it after building the form.
void guard_wheel(QWidget* root);

}  // namespace tunebench::ui

#include "ui/windows/wheel_guard.h"

#include <QAbstractScrollArea>
#include <QAbstractSpinBox>
#include <QApplication>
#include <QComboBox>
#include <QEvent>
#include <QObject>
#include <QWheelEvent>
#include <QWidget>

namespace tunebench::ui {

namespace {

class WheelGuard : public QObject {
 public:
  using QObject::QObject;

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override {
    if (event->type() != QEvent::Wheel) return false;
    auto* field = qobject_cast<QWidget*>(watched);
    if (!field || field->hasFocus()) return false;
    // Not the user's field yet: the wheel is for the scroll area around it (if any). Handed to
    // its viewport directly: Qt does not pass a wheel event on to parents once a filter took it.
    for (QWidget* up = field->parentWidget(); up; up = up->parentWidget())
      if (auto* area = qobject_cast<QAbstractScrollArea*>(up)) {
        const auto* wheel = static_cast<QWheelEvent*>(event);
        const QPointF at = area->viewport()->mapFromGlobal(wheel->globalPosition());
        QWheelEvent forwarded(at, wheel->globalPosition(), wheel->pixelDelta(), wheel->angleDelta(), wheel->buttons(),
                              wheel->modifiers(), wheel->phase(), wheel->inverted(), wheel->source());
        QApplication::sendEvent(area->viewport(), &forwarded);
        break;
      }
    return true;
  }
};

bool guarded(QWidget* w) { return qobject_cast<QAbstractSpinBox*>(w) || qobject_cast<QComboBox*>(w); }

void guard(QWidget* w, QObject* filter) {
  w->setFocusPolicy(Qt::StrongFocus);  // not Qt::WheelFocus: the wheel must not give the focus
  w->installEventFilter(filter);
}

}  // namespace

void guard_wheel(QWidget* root) {
  static WheelGuard* filter = new WheelGuard(qApp);  // one for the application, lives as long
  if (guarded(root)) guard(root, filter);
  for (QWidget* w : root->findChildren<QWidget*>())
    if (guarded(w)) guard(w, filter);
}

}  // namespace tunebench::ui

#include "ui/runner/exit_reason.h"

#include "core/launch/exit_reason.h"

namespace tunebench::ui {

QString describe_exit_code(int code) { return QString::fromStdString(launch::describe_exit_code(code)); }
QString describe_signal(int signal) { return QString::fromStdString(launch::describe_signal(signal)); }
QString describe_error_kind(const QString& kind) {
  return QString::fromStdString(launch::describe_error_kind(kind.toStdString()));
}
QString describe_shell_status(int status) { return QString::fromStdString(launch::describe_shell_status(status)); }

}  // namespace tunebench::ui

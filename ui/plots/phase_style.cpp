#include "ui/plots/phase_style.h"

#include "core/analysis/phase_style.h"

namespace tunebench::ui {

using protocol::Lane;
using protocol::Phase;

namespace {
QString text(std::string_view s) { return QString::fromUtf8(s.data(), qsizetype(s.size())); }
}  // namespace

QColor phase_color(Phase phase) { return QColor(QRgb(analysis::phase_rgb(phase))); }

QString phase_name(Phase phase) { return text(analysis::phase_label(phase)); }

QString phase_name(Phase phase, bool on_gpu) { return QString::fromStdString(analysis::phase_label(phase, on_gpu)); }

QString lane_name(Lane lane) { return text(analysis::lane_label(lane)); }

QString idle_explanation(Phase phase, const std::string& label) {
  const QString op = QString::fromStdString(label);
  switch (phase) {
    case Phase::HostWait:
      return op.isEmpty() ? QStringLiteral("the GPU ran nothing: the host had not issued the next kernel "
                                           "(no CPU op running: framework code between ops)")
                          : QStringLiteral("the GPU ran nothing: the host had not issued the next kernel; it was "
                                           "running %1")
                                .arg(op);
    case Phase::LaunchGap:
      return QStringLiteral("the GPU ran nothing: the next kernel was already issued (launch latency; a CUDA graph "
                            "removes it)");
    case Phase::SyncWait:
      return QStringLiteral("the GPU ran nothing: the host was blocked in a synchronisation in %1")
          .arg(op.isEmpty() ? QStringLiteral("an unknown op") : op);
    case Phase::DependencyWait:
      return op.isEmpty() ? QStringLiteral("the GPU ran nothing: the next kernel was already issued but held longer "
                                           "than a launch latency (the trace does not show by what; not launch "
                                           "latency, a CUDA graph does not remove it)")
                          : QStringLiteral("the GPU ran nothing: the next kernel was already issued but held by %1 "
                                           "(a dependency, not launch latency)")
                                .arg(op);
    default:
      return {};
  }
}

QBrush phase_brush(Phase phase) {
  if (!protocol::is_gpu_idle(phase)) return QBrush(phase_color(phase));
  return QBrush(phase_color(phase).darker(150), Qt::BDiagPattern);
}


const std::vector<Phase>& legend_phases() { return analysis::legend_phases(); }

QColor series_color(int i) { return QColor(QRgb(analysis::series_rgb(i))); }

}  // namespace tunebench::ui

#include "ui/plots/phase_style.h"

namespace tunebench::ui {

using protocol::Lane;
using protocol::Phase;

QColor phase_color(Phase phase) {
  switch (phase) {
    case Phase::DataWait:
      return QColor(0xe0, 0x8e, 0x0b);
    case Phase::HostToDevice:
      return QColor(0xf2, 0xc1, 0x4e);
    case Phase::Forward:
      return QColor(0x2e, 0x9d, 0x5a);
    case Phase::Backward:
      return QColor(0x2b, 0x6c, 0xb0);
    case Phase::Recompute:
      return QColor(0x8f, 0xc7, 0x6a);
    case Phase::Optimizer:
      return QColor(0x5b, 0xb8, 0xc9);
    case Phase::AllReduce:
      return QColor(0xb0, 0x3a, 0x8e);
    case Phase::AllGather:
      return QColor(0x7b, 0x4c, 0xc2);
    case Phase::ReduceScatter:
      return QColor(0xd8, 0x5a, 0x5a);
    case Phase::Broadcast:
      return QColor(0x99, 0x77, 0xaa);
    case Phase::Other:
      return QColor(0x9e, 0x9e, 0x9e);
    // GPU idle: pale, so that the work stands out; drawn hatched on the timeline.
    case Phase::HostWait:
      return QColor(0xf4, 0xc7, 0xc3);
    case Phase::LaunchGap:
      return QColor(0xfa, 0xe3, 0xb0);
    case Phase::SyncWait:
      return QColor(0xd7, 0xc4, 0xe8);
  }
  return Qt::gray;
}

QString phase_name(Phase phase) {
  switch (phase) {
    case Phase::DataWait:
      return QStringLiteral("data wait");
    case Phase::HostToDevice:
      return QStringLiteral("host→device");
    case Phase::Forward:
      return QStringLiteral("forward");
    case Phase::Backward:
      return QStringLiteral("backward");
    case Phase::Recompute:
      return QStringLiteral("recompute");
    case Phase::Optimizer:
      return QStringLiteral("optimizer");
    case Phase::AllReduce:
      return QStringLiteral("all-reduce");
    case Phase::AllGather:
      return QStringLiteral("all-gather");
    case Phase::ReduceScatter:
      return QStringLiteral("reduce-scatter");
    case Phase::Broadcast:
      return QStringLiteral("broadcast");
    case Phase::Other:
      return QStringLiteral("other");
    case Phase::HostWait:
      return QStringLiteral("GPU idle: host wait");
    case Phase::LaunchGap:
      return QStringLiteral("GPU idle: launch gap");
    case Phase::SyncWait:
      return QStringLiteral("GPU idle: sync");
  }
  return {};
}

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
    default:
      return {};
  }
}

QBrush phase_brush(Phase phase) {
  if (!protocol::is_gpu_idle(phase)) return QBrush(phase_color(phase));
  return QBrush(phase_color(phase).darker(150), Qt::BDiagPattern);
}

QString lane_name(Lane lane) {
  switch (lane) {
    case Lane::Host:
      return QStringLiteral("host");
    case Lane::Compute:
      return QStringLiteral("compute");
    case Lane::Comm:
      return QStringLiteral("comm");
  }
  return {};
}

const std::vector<Phase>& legend_phases() {
  static const std::vector<Phase> phases = {
      Phase::DataWait,  Phase::HostToDevice, Phase::Forward,       Phase::Backward,  Phase::Recompute, Phase::Optimizer,
      Phase::AllReduce, Phase::AllGather,    Phase::ReduceScatter, Phase::Broadcast, Phase::Other,
      Phase::HostWait,  Phase::LaunchGap,    Phase::SyncWait};
  return phases;
}

QColor series_color(int i) {
  static const QColor colors[] = {QColor(0x1f, 0x77, 0xb4), QColor(0xff, 0x7f, 0x0e), QColor(0x2c, 0xa0, 0x2c),
                                  QColor(0xd6, 0x27, 0x28), QColor(0x94, 0x67, 0xbd), QColor(0x8c, 0x56, 0x4b),
                                  QColor(0xe3, 0x77, 0xc2), QColor(0x7f, 0x7f, 0x7f)};
  return colors[((i % 8) + 8) % 8];
}

}  // namespace tunebench::ui

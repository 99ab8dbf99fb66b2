#include "core/analysis/phase_style.h"

#include "core/config/trial_config.h"

namespace tunebench::analysis {

using protocol::Lane;
using protocol::Phase;

std::string_view phase_label(Phase phase) {
  switch (phase) {
    case Phase::DataWait:
      return "data wait";
    case Phase::HostToDevice:
      return "host→device";
    case Phase::Forward:
      return "forward";
    case Phase::Backward:
      return "backward";
    case Phase::Recompute:
      return "recompute";
    case Phase::Optimizer:
      return "optimizer";
    case Phase::AllReduce:
      return "all-reduce";
    case Phase::AllGather:
      return "all-gather";
    case Phase::ReduceScatter:
      return "reduce-scatter";
    case Phase::Broadcast:
      return "broadcast";
    case Phase::Other:
      return "other";
    case Phase::HostWait:
      return "GPU idle: host wait";
    case Phase::LaunchGap:
      return "GPU idle: launch gap";
    case Phase::SyncWait:
      return "GPU idle: sync";
    case Phase::DependencyWait:
      return "GPU idle: dependency wait";
  }
  return "other";
}

std::string phase_label(Phase phase, bool on_gpu) {
  const std::string_view gpu = phase_label(phase);
  if (on_gpu || !protocol::is_gpu_idle(phase)) return std::string(gpu);
  const size_t what = gpu.find(": ");  // "GPU idle: sync" -> "sync"
  return config::device_noun(false) + " idle" + std::string(what == std::string_view::npos ? "" : gpu.substr(what));
}

std::string_view lane_label(Lane lane) {
  switch (lane) {
    case Lane::Host:
      return "host";
    case Lane::Compute:
      return "compute";
    case Lane::Comm:
      return "comm";
  }
  return "";
}

const std::vector<Phase>& legend_phases() {
  static const std::vector<Phase> phases = {
      Phase::DataWait,  Phase::HostToDevice, Phase::Forward,       Phase::Backward,  Phase::Recompute, Phase::Optimizer,
      Phase::AllReduce, Phase::AllGather,    Phase::ReduceScatter, Phase::Broadcast, Phase::Other,
      Phase::HostWait,  Phase::LaunchGap,    Phase::SyncWait,      Phase::DependencyWait};
  return phases;
}

uint32_t phase_rgb(Phase phase) {
  switch (phase) {
    case Phase::DataWait:
      return 0xe08e0b;
    case Phase::HostToDevice:
      return 0xf2c14e;
    case Phase::Forward:
      return 0x2e9d5a;
    case Phase::Backward:
      return 0x2b6cb0;
    case Phase::Recompute:
      return 0x8fc76a;
    case Phase::Optimizer:
      return 0x5bb8c9;
    case Phase::AllReduce:
      return 0xb03a8e;
    case Phase::AllGather:
      return 0x7b4cc2;
    case Phase::ReduceScatter:
      return 0xd85a5a;
    case Phase::Broadcast:
      return 0x9977aa;
    case Phase::Other:
      return 0x9e9e9e;
    // GPU idle: pale, so that the work stands out (the window hatches them on the timeline).
    case Phase::HostWait:
      return 0xf4c7c3;
    case Phase::LaunchGap:
      return 0xfae3b0;
    case Phase::SyncWait:
      return 0xd7c4e8;
    case Phase::DependencyWait:
      return 0xbfdcc8;
  }
  return 0x808080;
}

uint32_t part_rgb(Part part) {
  switch (part) {
    case Part::DataWait:
      return phase_rgb(Phase::DataWait);
    case Part::HostToDevice:
      return phase_rgb(Phase::HostToDevice);
    case Part::Forward:
      return phase_rgb(Phase::Forward);
    case Part::Backward:
      return phase_rgb(Phase::Backward);
    case Part::Optimizer:
      return phase_rgb(Phase::Optimizer);
    case Part::OtherCompute:
      return phase_rgb(Phase::Other);
    case Part::ExposedComm:
      return phase_rgb(Phase::AllReduce);
    case Part::HostWait:
      return phase_rgb(Phase::HostWait);
    case Part::LaunchGap:
      return phase_rgb(Phase::LaunchGap);
    case Part::SyncWait:
      return phase_rgb(Phase::SyncWait);
    case Part::DependencyWait:
      return phase_rgb(Phase::DependencyWait);
    case Part::Idle:
      return 0xb0b0b0;
  }
  return 0x808080;
}

uint32_t series_rgb(int i) {
  static const uint32_t colors[] = {0x1f77b4, 0xff7f0e, 0x2ca02c, 0xd62728, 0x9467bd, 0x8c564b, 0xe377c2, 0x7f7f7f};
  return colors[((i % 8) + 8) % 8];
}

}  // namespace tunebench::analysis

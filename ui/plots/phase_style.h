// Colours and names of phases and lanes as Qt types, from core/analysis/phase_style.h (one place,
// shared with the HTML report), so the legend, bars and tooltips agree.
// Colours follow the lane: warm for host, greens/blues for compute, purples for communication.
#pragma once

#include <string>
#include <vector>

#include <QBrush>
#include <QColor>
#include <QString>

#include "core/protocol/events.h"

namespace tunebench::ui {

QColor phase_color(protocol::Phase phase);
QString phase_name(protocol::Phase phase);  // "all-reduce", "data wait", ...
// In the words of the trial's device: "CPU rank idle: sync" on the CPU (analysis::phase_label).
QString phase_name(protocol::Phase phase, bool on_gpu);
QString lane_name(protocol::Lane lane);
// GPU-idle gaps (HostWait, LaunchGap, SyncWait) are drawn pale and hatched: the hatch over a bar
// of phase_color(). Other phases: a solid phase_color() brush.
QBrush phase_brush(protocol::Phase phase);
// A GPU-idle gap in words, with the CPU op it names ("the host was blocked in .item() ..."); empty
// for other phases.
QString idle_explanation(protocol::Phase phase, const std::string& label);
// The phases shown in the legend, in the order a step runs them.
const std::vector<protocol::Phase>& legend_phases();
// Distinct colours for series of rank/device `i` (step time, telemetry).
QColor series_color(int i);

}  // namespace tunebench::ui

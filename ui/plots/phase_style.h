// Colours and names of phases and lanes as Qt types, from core/analysis/phase_style.h (one place,
// shared with the HTML report), so the legend, bars and tooltips agree.
// Colours follow the lane: warm for host, greens/blues for compute, purples for communication.
#pragma once

#include <vector>

#include <QColor>
#include <QString>

#include "core/protocol/events.h"

namespace tunebench::ui {

QColor phase_color(protocol::Phase phase);
QString phase_name(protocol::Phase phase);  // "all-reduce", "data wait", ...
QString lane_name(protocol::Lane lane);
// The phases shown in the legend, in the order a step runs them.
const std::vector<protocol::Phase>& legend_phases();
// Distinct colours for series of rank/device `i` (step time, telemetry).
QColor series_color(int i);

}  // namespace tunebench::ui

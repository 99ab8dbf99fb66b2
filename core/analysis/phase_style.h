// Names and colours of phases and lanes, colours of breakdown parts and plot series (0xRRGGBB),
// defined once: the GUI's plots (ui/plots/phase_style.h, BreakdownPlot) and the HTML report
// (core/report) draw with these, so a phase looks and reads the same in the window and in a
// report sent to someone without the app.
// Colours follow the lane: warm for host, greens/blues for compute, purples for communication.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "core/analysis/phase_breakdown.h"
#include "core/protocol/events.h"

namespace tunebench::analysis {

// "all-reduce", "data wait", "host→device", ... (protocol::to_string is the wire name). The idle
// phases read "GPU idle: host wait": a GPU's kernel samples measure them.
std::string_view phase_label(protocol::Phase phase);
// The same in the words of what the trial ran on: an idle phase of a trial on the CPU names its
// device with config::device_noun ("CPU rank idle: sync"), never a GPU; other phases as above.
std::string phase_label(protocol::Phase phase, bool on_gpu);
std::string_view lane_label(protocol::Lane lane);  // "host", "compute", "comm"
// The phases a legend lists, in the order a step runs them.
const std::vector<protocol::Phase>& legend_phases();

uint32_t phase_rgb(protocol::Phase phase);
// A breakdown part in the colour of the phase it counts; idle is a grey that reads on light and
// dark backgrounds.
uint32_t part_rgb(Part part);
// Distinct colours for series i (trials, ranks, devices), cycling after 8.
uint32_t series_rgb(int i);

}  // namespace tunebench::analysis

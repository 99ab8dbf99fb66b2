// Small inline-SVG charts for the HTML report: a line chart with axes, ticks, units and shaded
// bands, and the number formatting its ticks and coordinates use. Plain strings, no DOM.
// Colours that depend on the light/dark scheme are CSS classes the report's stylesheet defines
// (.ax axis and text, .grid, .band); series colours are fixed (analysis/phase_style.h).
// The charts draw what they are given: they compute no figure.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tunebench::report {

// "#2b6cb0"
std::string css_rgb(uint32_t rgb);
// A coordinate with at most one decimal, no trailing ".0" ("12", "12.5", "-3").
std::string coord(double v);
// About `count` round tick values covering [lo, hi] (steps of 1, 2 or 5 times a power of ten).
std::vector<double> nice_ticks(double lo, double hi, int count);
// A tick label: as many decimals as the tick step needs, thousands separated ("1,500", "0.25").
std::string tick_label(double value, double step);

struct ChartPoint {
  double x = 0.0;
  double y = 0.0;
  bool hollow = false;  // drawn as an open marker (warm-up steps)
};

struct ChartSeries {
  std::string name;  // in the point titles
  uint32_t rgb = 0;
  bool dashed = false;
  bool markers = false;  // a marker at every point (few points)
  std::vector<ChartPoint> points;  // in x order; a gap in x larger than `break_gap` breaks the line
  double break_gap = 0.0;          // 0: never broken
};

struct ChartBand {
  double x0 = 0.0, x1 = 0.0;
  std::string label;  // drawn at the band's top-left
};

struct LineChart {
  std::string title;    // aria-label and <title> of the chart
  std::string x_label;  // with its unit: "step", "time since the first sample (s)"
  std::string y_label;  // "step time (ms)"
  std::vector<ChartSeries> series;
  std::vector<ChartBand> bands;
  std::optional<double> y_min;  // default 0
  std::optional<double> y_max;  // default the data's maximum (with headroom)
  std::optional<double> y_top;  // cap the axis here even when data goes above (warm-up spikes)
  std::string y_unit;           // appended to point titles ("ms")
  std::string x_unit;           // appended to point titles ("s"), or "" for steps ("step 7")
  bool integer_x = false;       // ticks at whole numbers only (steps)
};

// The chart as an <svg> element (viewBox 640 x 260, scales to its container).
std::string render_line_chart(const LineChart& chart);

}  // namespace tunebench::report

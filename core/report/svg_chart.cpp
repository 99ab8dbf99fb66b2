#include "core/report/svg_chart.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/analysis/format.h"
#include "core/report/html_text.h"

namespace tunebench::report {

namespace {
constexpr double kWidth = 640, kHeight = 260;
constexpr double kLeft = 58, kRight = 14, kTop = 16, kBottom = 42;

int decimals_for(double step) {
  if (step <= 0) return 0;
  return std::max(0, -static_cast<int>(std::floor(std::log10(step) + 1e-9)));
}
}  // namespace

std::string css_rgb(uint32_t rgb) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "#%06x", rgb & 0xffffffu);
  return buf;
}

std::string coord(double v) {
  if (!std::isfinite(v)) return "0";
  std::string s = analysis::format_fixed(std::round(v * 10.0) / 10.0, 1);
  if (s.size() > 2 && s.compare(s.size() - 2, 2, ".0") == 0) s.resize(s.size() - 2);
  return s;
}

std::vector<double> nice_ticks(double lo, double hi, int count) {
  if (!std::isfinite(lo) || !std::isfinite(hi) || count < 1) return {};
  if (hi <= lo) hi = lo + 1.0;
  const double raw = (hi - lo) / count;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (raw <= m * mag * 1.0000001) {
      step = m * mag;
      break;
    }
  std::vector<double> ticks;
  for (double t = std::ceil(lo / step - 1e-9) * step; t <= hi + step * 1e-9 && ticks.size() < 50; t += step)
    ticks.push_back(std::abs(t) < step * 1e-9 ? 0.0 : t);
  return ticks;
}

std::string tick_label(double value, double step) {
  const int d = decimals_for(step);
  if (d == 0 && std::abs(value) >= 1000) return analysis::format_count(value);
  return analysis::format_fixed(value, d);
}

std::string render_line_chart(const LineChart& c) {
  double x_lo = 1e300, x_hi = -1e300, y_hi = 0;
  for (const auto& s : c.series)
    for (const auto& p : s.points) {
      x_lo = std::min(x_lo, p.x);
      x_hi = std::max(x_hi, p.x);
      y_hi = std::max(y_hi, p.y);
    }
  for (const auto& b : c.bands) {
    x_lo = std::min(x_lo, b.x0);
    x_hi = std::max(x_hi, b.x1);
  }
  if (x_lo > x_hi) x_lo = 0, x_hi = 1;
  if (x_hi <= x_lo) x_hi = x_lo + 1;
  const double y_lo = c.y_min.value_or(0.0);
  double y_top = c.y_max.value_or(y_hi * 1.08);
  if (c.y_top) y_top = std::min(y_top, *c.y_top);
  if (y_top <= y_lo) y_top = y_lo + 1;
  auto y_ticks = nice_ticks(y_lo, y_top, 5);
  if (y_ticks.size() > 1 && !c.y_max && !c.y_top) {  // the axis ends on a round tick above the data
    const double step = y_ticks[1] - y_ticks[0];
    y_top = std::ceil(y_top / step - 1e-9) * step;
    y_ticks = nice_ticks(y_lo, y_top, 5);
  }
  auto x_ticks = nice_ticks(x_lo, x_hi, 8);
  if (c.integer_x) {
    x_ticks.erase(std::remove_if(x_ticks.begin(), x_ticks.end(),
                                 [](double t) { return std::abs(t - std::round(t)) > 1e-9; }),
                  x_ticks.end());
    if (x_ticks.empty()) x_ticks.push_back(std::round(x_lo));
  }
  const double pw = kWidth - kLeft - kRight, ph = kHeight - kTop - kBottom;
  auto X = [&](double x) { return kLeft + (x - x_lo) / (x_hi - x_lo) * pw; };
  auto Y = [&](double y) { return kTop + ph - (std::min(y, y_top) - y_lo) / (y_top - y_lo) * ph; };

  std::string o = "<svg class=\"chart\" viewBox=\"0 0 " + coord(kWidth) + " " + coord(kHeight) +
                  "\" role=\"img\" aria-label=\"" + html_escape(c.title) + "\"><title>" + html_escape(c.title) +
                  "</title>";
  for (const auto& b : c.bands) {
    o += "<rect class=\"band\" x=\"" + coord(X(b.x0)) + "\" y=\"" + coord(kTop) + "\" width=\"" +
         coord(std::max(0.0, X(b.x1) - X(b.x0))) + "\" height=\"" + coord(ph) + "\"/>";
    if (!b.label.empty())
      o += "<text class=\"ax small\" x=\"" + coord(X(b.x0) + 4) + "\" y=\"" + coord(kTop + 12) + "\">" +
           html_escape(b.label) + "</text>";
  }
  const double y_step = y_ticks.size() > 1 ? y_ticks[1] - y_ticks[0] : 1.0;
  for (double t : y_ticks) {
    if (t > y_top + 1e-9) continue;
    o += "<line class=\"grid\" x1=\"" + coord(kLeft) + "\" x2=\"" + coord(kWidth - kRight) + "\" y1=\"" +
         coord(Y(t)) + "\" y2=\"" + coord(Y(t)) + "\"/><text class=\"ax\" x=\"" + coord(kLeft - 6) + "\" y=\"" +
         coord(Y(t) + 4) + "\" text-anchor=\"end\">" + tick_label(t, y_step) + "</text>";
  }
  const double x_step = x_ticks.size() > 1 ? x_ticks[1] - x_ticks[0] : 1.0;
  for (double t : x_ticks)
    o += "<line class=\"axis\" x1=\"" + coord(X(t)) + "\" x2=\"" + coord(X(t)) + "\" y1=\"" + coord(kTop + ph) +
         "\" y2=\"" + coord(kTop + ph + 4) + "\"/><text class=\"ax\" x=\"" + coord(X(t)) + "\" y=\"" +
         coord(kTop + ph + 17) + "\" text-anchor=\"middle\">" + tick_label(t, x_step) + "</text>";
  o += "<path class=\"axis\" d=\"M" + coord(kLeft) + " " + coord(kTop) + "V" + coord(kTop + ph) + "H" +
       coord(kWidth - kRight) + "\"/>";
  o += "<text class=\"ax\" x=\"" + coord(kLeft + pw / 2) + "\" y=\"" + coord(kHeight - 6) +
       "\" text-anchor=\"middle\">" + html_escape(c.x_label) + "</text>";
  o += "<text class=\"ax\" transform=\"translate(14 " + coord(kTop + ph / 2) +
       ") rotate(-90)\" text-anchor=\"middle\">" + html_escape(c.y_label) + "</text>";

  for (const auto& s : c.series) {
    if (s.points.empty()) continue;
    const std::string color = css_rgb(s.rgb);
    std::string d;
    for (size_t i = 0; i < s.points.size(); ++i) {
      const bool jump = i == 0 || (s.break_gap > 0 && s.points[i].x - s.points[i - 1].x > s.break_gap);
      d += (jump ? "M" : "L") + coord(X(s.points[i].x)) + " " + coord(Y(s.points[i].y));
    }
    o += "<path fill=\"none\" stroke=\"" + color + "\" stroke-width=\"1.6\"" +
         (s.dashed ? std::string(" stroke-dasharray=\"5 3\"") : std::string()) + " d=\"" + d + "\"/>";
    if (!s.markers) continue;
    for (const auto& p : s.points) {
      const bool clipped = p.y > y_top;
      const std::string where = c.x_unit.empty() ? "step " + tick_label(p.x, 1) : tick_label(p.x, 0.01) + " " + c.x_unit;
      const std::string title = "<title>" + html_escape(s.name) + ": " + where + ", " +
                                analysis::format_significant(p.y, 3) + " " + html_escape(c.y_unit) +
                                (p.hollow ? " (warm-up)" : "") + "</title>";
      if (clipped)  // a spike above the axis: a triangle at the top edge, its value in the title
        o += "<path fill=\"" + color + "\" d=\"M" + coord(X(p.x) - 4) + " " + coord(kTop + 6) + "L" + coord(X(p.x)) +
             " " + coord(kTop) + "L" + coord(X(p.x) + 4) + " " + coord(kTop + 6) + "Z\">" + title + "</path>";
      else
        o += "<circle cx=\"" + coord(X(p.x)) + "\" cy=\"" + coord(Y(p.y)) + "\" r=\"2.8\" " +
             (p.hollow ? "class=\"hollow\" stroke=\"" + color + "\"" : "fill=\"" + color + "\"") + ">" + title +
             "</circle>";
    }
  }
  o += "</svg>";
  return o;
}

}  // namespace tunebench::report

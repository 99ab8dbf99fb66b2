#include "core/report/html_report.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <ctime>
#include <map>
#include <set>

#include "core/analysis/format.h"
#include "core/analysis/phase_style.h"
#include "core/analysis/step_time.h"
#include "core/report/embedded_session.h"
#include "core/report/hardware_figures.h"
#include "core/report/html_text.h"
#include "core/report/svg_chart.h"

namespace tunebench::report {

namespace {

using analysis::Part;
using protocol::Lane;
using protocol::Phase;

constexpr int kTimelineSteps = 3;       // steps of each trial's timeline, around its representative one
constexpr int kMaxTimelineRanks = 16;   // ranks drawn per trial (all of them up to this)

// The stylesheet: light and dark by prefers-color-scheme, a phone's width, print.
constexpr const char* kStyle = R"css(
:root{--bg:#fff;--fg:#1c2330;--muted:#596273;--line:#d9dee6;--card:#f3f5f8;--accent:#2b6cb0;--grid:#e7eaef;--band:rgba(120,120,120,.14);color-scheme:light dark}
@media (prefers-color-scheme:dark){:root{--bg:#15181d;--fg:#e3e6eb;--muted:#9ea7b5;--line:#343b46;--card:#1e232a;--accent:#82b3ec;--grid:#2a3038;--band:rgba(160,160,160,.16)}}
*{box-sizing:border-box}
html{-webkit-text-size-adjust:100%}
body{margin:0 auto;max-width:1120px;padding:18px 20px 40px;font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;background:var(--bg);color:var(--fg)}
h1{font-size:1.55em;line-height:1.25;margin:.1em 0 .2em;overflow-wrap:anywhere}
h2{font-size:1.2em;margin:1.8em 0 .5em;padding-bottom:.2em;border-bottom:1px solid var(--line)}
h3{font-size:1.02em;margin:1.2em 0 .3em;overflow-wrap:anywhere}
p{margin:.4em 0}
.kicker{color:var(--muted);font-size:.85em;letter-spacing:.06em;text-transform:uppercase;margin:0}
.meta,.note{color:var(--muted);font-size:.9em}
nav ol{display:flex;flex-wrap:wrap;gap:.2em 1.1em;list-style:none;padding:0;margin:.6em 0;font-size:.9em}
a{color:var(--accent)}
.verdict{font-size:1.12em;background:var(--card);border-left:4px solid var(--accent);padding:.7em 1em;margin:1em 0}
.scroll{overflow-x:auto;-webkit-overflow-scrolling:touch;margin:.4em 0}
table{border-collapse:collapse;font-variant-numeric:tabular-nums;font-size:.93em}
th,td{padding:.32em .65em;border-bottom:1px solid var(--line);text-align:right;vertical-align:top}
thead th{border-bottom:2px solid var(--line);font-weight:600;min-width:8em;overflow-wrap:break-word}
td{white-space:nowrap}
th:first-child,td:first-child{text-align:left;position:sticky;left:0;background:var(--bg);min-width:9em;max-width:16em;white-space:normal}
td.text{text-align:left;min-width:9em;max-width:22em;white-space:normal;overflow-wrap:break-word}
td small,th small{display:block;color:var(--muted);font-weight:normal}
table.text thead th{text-align:left}
.better{color:#1e8a4c}.worse{color:#c0392b}
@media (prefers-color-scheme:dark){.better{color:#5fd08e}.worse{color:#f08070}}
.sw{display:inline-block;width:.85em;height:.85em;border-radius:2px;vertical-align:-.08em;margin-right:.35em}
.legend{display:flex;flex-wrap:wrap;gap:.25em 1.1em;list-style:none;padding:0;margin:.5em 0;font-size:.88em}
.bars{margin:.5em 0}
.bar{margin:.55em 0}
.bar-label{font-size:.92em;overflow-wrap:anywhere}
.bar-label span{color:var(--muted)}
svg.hbar{display:block;height:22px;min-width:2px}
figure{margin:.6em 0 1.2em}
figcaption{font-size:.92em;margin:.2em 0;overflow-wrap:anywhere}
svg.chart{display:block;width:100%;max-width:780px;min-width:480px;height:auto}
svg.lanes{display:block;width:100%;min-width:640px;height:auto}
svg .ax{fill:var(--muted);font-size:12px}
svg .small{font-size:11px}
svg .in{fill:#fff;font-size:10px;pointer-events:none}
svg .grid{stroke:var(--grid)}
svg .axis{stroke:var(--muted);fill:none}
svg .band{fill:var(--band)}
svg .mark{stroke:var(--muted);stroke-dasharray:3 3}
svg .hollow{fill:var(--bg);stroke-width:1.5}
.finding{margin:.5em 0 .8em}
.finding .kind{font-size:.78em;text-transform:uppercase;letter-spacing:.04em;color:var(--muted);margin-right:.4em}
.try{margin:.2em 0 .2em 1.2em;padding:0}
code,pre{font-family:ui-monospace,"DejaVu Sans Mono",Menlo,Consolas,monospace;font-size:.88em}
pre{background:var(--card);padding:.6em .8em;border-radius:4px;white-space:pre-wrap;overflow-wrap:anywhere;margin:.3em 0}
.tags span{display:inline-block;border:1px solid var(--line);border-radius:9px;padding:0 .5em;margin:0 .3em .2em 0;font-size:.85em}
footer{margin-top:2.5em;color:var(--muted);font-size:.88em;border-top:1px solid var(--line);padding-top:.6em}
@media (max-width:600px){body{padding:12px 12px 32px;font-size:14px}h1{font-size:1.3em}.verdict{font-size:1.04em}th:first-child,td:first-child{min-width:7.5em;max-width:9.5em}}
@media print{:root{--bg:#fff;--fg:#000;--muted:#444;--line:#bbb;--card:#f2f2f2;--grid:#ddd}body{max-width:none;padding:0;font-size:10.5pt}nav{display:none}.scroll{overflow:visible}svg.chart,svg.lanes{min-width:0}figure,tr,.finding,.bar{break-inside:avoid}h2,h3{break-after:avoid}a{color:inherit;text-decoration:none}}
)css";

std::string esc(const std::string& s) { return html_escape(s); }

std::string swatch(uint32_t rgb) { return "<span class=\"sw\" style=\"background:" + css_rgb(rgb) + "\"></span>"; }

std::string date_of(int64_t us) {
  if (us <= 0) return "";
  const std::time_t t = static_cast<std::time_t>(us / 1000000);
  std::tm tm{};
  if (!gmtime_r(&t, &tm)) return "";
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", &tm);
  return buf;
}

std::string with_unit(const std::string& number, const std::string& unit) {
  if (unit.empty()) return number;
  return number + (unit == "%" ? " %" : " " + unit);
}

// ---- sections ----------------------------------------------------------------------------------

void table_head(std::ostream& o, const ReportContents& rc, const std::string& first) {
  const auto& c = rc.report.comparison;
  o << "<thead><tr><th>" << esc(first) << "</th>";
  for (size_t g = 0; g < c.trials.size(); ++g) {
    o << "<th>" << swatch(rc.panels[rc.first_panel[g]].rgb) << esc(c.trials[g].label);
    if (c.trials[g].repeat_ids.size() > 1) o << "<small>" << c.trials[g].repeat_ids.size() << " repeats pooled</small>";
    if (g == c.baseline && c.trials.size() > 1) o << "<small>baseline</small>";
    o << "</th>";
  }
  o << "</tr></thead>";
}

void setup_section(std::ostream& o, const ReportContents& rc) {
  o << "<section id=\"setup\"><h2>Configuration</h2><p class=\"note\">The setup of each trial, and only the knobs "
       "that differ between them.</p><div class=\"scroll\"><table class=\"text\">";
  table_head(o, rc, "");
  o << "<tbody>";
  auto rows = [&](const std::vector<TableRow>& list) {
    for (const auto& r : list) {
      o << "<tr><th>" << esc(r.label) << "</th>";
      for (const auto& v : r.values) o << "<td class=\"text\">" << esc(v) << "</td>";
      o << "</tr>";
    }
  };
  rows(rc.setup);
  if (rc.config_diff.empty())
    o << "<tr><th>Knobs</th><td class=\"text\" colspan=\"" << rc.report.comparison.trials.size()
      << "\">no knob differs</td></tr>";
  rows(rc.config_diff);
  o << "</tbody></table></div></section>\n";
}

void metrics_section(std::ostream& o, const ReportContents& rc) {
  const auto& c = rc.report.comparison;
  const bool several = c.trials.size() > 1;
  o << "<section id=\"metrics\"><h2>Metrics</h2><p class=\"note\">Median over measured steps (warm-up excluded), "
       "p25–p75 below it";
  if (several) o << ", and the ratio to the baseline, " << esc(c.trials[c.baseline].label);
  o << ".</p><div class=\"scroll\"><table>";
  table_head(o, rc, "");
  o << "<tbody>";
  for (const auto& m : c.metrics) {
    o << "<tr><th>" << esc(m.label) << "</th>";
    for (size_t i = 0; i < c.trials.size(); ++i) {
      o << "<td>";
      if (const auto& v = m.values[i]) {
        o << esc(with_unit(analysis::format_metric_value(v->median, m.unit), m.unit));
        if (v->n > 1 && v->p25 != v->p75)
          o << "<small>" << esc(analysis::format_metric_value(v->p25, m.unit)) << "–"
            << esc(with_unit(analysis::format_metric_value(v->p75, m.unit), m.unit)) << "</small>";
        if (several && i != c.baseline && m.ratio[i]) {
          // Green when better than the baseline beyond the noise, red when worse: as in the window.
          const double r = *m.ratio[i];
          const analysis::Standing st = analysis::standing(m, i);
          const char* cls = st == analysis::Standing::Better ? "better" : st == analysis::Standing::Worse ? "worse" : "";
          o << "<small" << (*cls ? std::string(" class=\"") + cls + "\"" : std::string()) << ">"
            << analysis::format_ratio(r) << "</small>";
        }
      } else {
        o << "—";
      }
      o << "</td>";
    }
    o << "</tr>";
  }
  if (c.single_reference) {
    o << "<tr><th>Scaling efficiency <small>vs " << esc(c.trials[*c.single_reference].label) << "</small></th>";
    for (size_t i = 0; i < c.trials.size(); ++i)
      o << "<td>" << (c.scaling_efficiency[i] ? analysis::format_fixed(*c.scaling_efficiency[i] * 100.0, 1) + " %" : "—")
        << "</td>";
    o << "</tr>";
  }
  o << "</tbody></table></div>";
  if (!c.throughput_statements.empty()) {
    o << "<ul>";
    for (const auto& s : c.throughput_statements) o << "<li>" << esc(s) << "</li>";
    o << "</ul>";
  }
  o << "</section>\n";
}

void breakdown_section(std::ostream& o, const ReportContents& rc) {
  const auto& c = rc.report.comparison;
  double longest = 0;
  for (const auto& t : c.trials) longest = std::max(longest, t.breakdown.step_ms);
  std::set<Part> seen;
  o << "<section id=\"breakdown\"><h2>Where the step time goes</h2><p class=\"note\">Mean time per measured step on "
       "the critical rank; the parts add up to the step. Bars share one scale.</p><figure class=\"bars\">";
  for (size_t g = 0; g < c.trials.size(); ++g) {
    const auto& t = c.trials[g];
    const auto& b = t.breakdown;
    o << "<div class=\"bar\"><div class=\"bar-label\">" << swatch(rc.panels[rc.first_panel[g]].rgb) << "<b>"
      << esc(t.label) << "</b> <span>" << esc(analysis::format_ms(b.step_ms)) << " per step</span></div>";
    if (b.step_ms <= 0 || longest <= 0) {
      o << "<p class=\"note\">no measured steps</p></div>";
      continue;
    }
    std::string aria = t.label + ":";
    for (Part p : analysis::kAllParts)
      if (b[p] > 0) aria += " " + std::string(analysis::label(p)) + " " + analysis::format_ms(b[p]) + ",";
    aria.pop_back();
    o << "<svg class=\"hbar\" viewBox=\"0 0 1000 22\" preserveAspectRatio=\"none\" style=\"width:"
      << analysis::format_fixed(std::max(0.3, b.step_ms / longest * 100.0), 2) << "%\" role=\"img\" aria-label=\""
      << esc(aria) << "\">";
    double x = 0;
    for (Part p : analysis::kAllParts) {
      if (b[p] <= 0) continue;
      seen.insert(p);
      const double w = b[p] / b.step_ms * 1000.0;
      o << "<rect x=\"" << coord(x) << "\" width=\"" << coord(std::max(w, 0.1)) << "\" height=\"22\" fill=\""
        << css_rgb(analysis::part_rgb(p)) << "\"><title>" << esc(std::string(analysis::label(p))) << ": "
        << esc(analysis::format_ms(b[p])) << " (" << esc(analysis::format_pct(b[p] / b.step_ms)) << ")</title></rect>";
      x += w;
    }
    o << "</svg></div>";
  }
  o << "<ul class=\"legend\">";
  for (Part p : analysis::kAllParts)
    if (seen.count(p)) o << "<li>" << swatch(analysis::part_rgb(p)) << esc(std::string(analysis::label(p))) << "</li>";
  o << "</ul></figure>";
  // The numbers behind the bars.
  o << "<div class=\"scroll\"><table>";
  table_head(o, rc, "ms per step");
  o << "<tbody>";
  for (Part p : analysis::kAllParts) {
    bool any = false;
    for (const auto& t : c.trials) any = any || t.breakdown[p] > 0;
    if (!any) continue;
    o << "<tr><th>" << swatch(analysis::part_rgb(p)) << esc(std::string(analysis::label(p))) << "</th>";
    for (const auto& t : c.trials)
      o << "<td>" << esc(analysis::format_ms(t.breakdown[p]))
        << (t.breakdown.step_ms > 0 ? "<small>" + esc(analysis::format_pct(t.breakdown[p] / t.breakdown.step_ms)) + "</small>"
                                    : "")
        << "</td>";
    o << "</tr>";
  }
  o << "<tr><th>step</th>";
  for (const auto& t : c.trials) o << "<td><b>" << esc(analysis::format_ms(t.breakdown.step_ms)) << "</b></td>";
  o << "</tr></tbody></table></div></section>\n";
}

void series_legend(std::ostream& o, const ReportContents& rc, bool dashed_after_8) {
  o << "<ul class=\"legend\">";
  for (size_t i = 0; i < rc.panels.size(); ++i)
    o << "<li>" << swatch(rc.panels[i].rgb) << esc(rc.panels[i].name)
      << (dashed_after_8 && i >= 8 ? " (dashed)" : "") << "</li>";
  o << "</ul>";
}

void steps_section(std::ostream& o, const ReportContents& rc) {
  LineChart chart;
  chart.title = "Step time per step, every trial (warm-up steps hollow)";
  chart.x_label = "step";
  chart.y_label = "step time (ms)";
  chart.y_unit = "ms";
  chart.integer_x = true;
  double warm_lo = 1e300, warm_hi = -1e300, measured_max = 0, all_max = 0;
  for (size_t i = 0; i < rc.panels.size(); ++i) {
    ChartSeries s;
    s.name = rc.panels[i].name;
    s.rgb = rc.panels[i].rgb;
    s.dashed = i >= 8;
    s.markers = true;
    for (const auto& p : analysis::step_curve(rc.panels[i].stored->log)) {
      s.points.push_back({static_cast<double>(p.step), p.ms, p.warmup});
      all_max = std::max(all_max, p.ms);
      if (p.warmup) {
        warm_lo = std::min(warm_lo, static_cast<double>(p.step));
        warm_hi = std::max(warm_hi, static_cast<double>(p.step));
      } else {
        measured_max = std::max(measured_max, p.ms);
      }
    }
    chart.series.push_back(std::move(s));
  }
  if (warm_lo <= warm_hi) chart.bands.push_back({warm_lo - 0.5, warm_hi + 0.5, "warm-up"});
  // A first step that compiles and allocates can take 10x the rest: keep the measured steps readable.
  if (measured_max > 0 && all_max > measured_max * 1.6) chart.y_top = measured_max * 1.35;
  o << "<section id=\"steps\"><h2>Step time per step</h2><p class=\"note\">The slowest rank's time of each step. "
       "Warm-up steps (shaded, hollow markers) are left out of every figure above";
  if (chart.y_top) o << "; a warm-up step above the axis is marked with a triangle at the top";
  o << ".</p><figure><div class=\"scroll\">" << render_line_chart(chart) << "</div>";
  series_legend(o, rc, rc.panels.size() > 8);
  o << "</figure></section>\n";
}

// ---- timeline ----------------------------------------------------------------------------------

struct LaneBar {
  int64_t start_us = 0, end_us = 0;
  Phase phase = Phase::Other;
  std::string label;
  int64_t bytes = 0;
  double busbw_gbps = 0;
  int merged = 1;
};

struct TimelineWindow {
  std::vector<int64_t> steps;  // step indices drawn
  int64_t origin_us = 0;       // rank-0 clock
  int64_t end_us = 0;
};

// The measured steps around the representative one, on the common clock (hello clock offsets).
std::optional<TimelineWindow> timeline_window(const TrialPanel& p) {
  const auto& log = p.stored->log;
  std::set<int64_t> measured;
  for (const auto& [rank, r] : log.ranks)
    for (const auto& s : r.steps)
      if (!s.warmup && s.end_us > s.start_us) measured.insert(s.step);
  if (measured.empty()) return std::nullopt;
  int64_t center = p.metrics.representative_step;
  if (!measured.count(center)) center = *measured.begin();
  std::vector<int64_t> all(measured.begin(), measured.end());
  const auto at = std::find(all.begin(), all.end(), center) - all.begin();
  const auto first = std::clamp<std::ptrdiff_t>(at - 1, 0, std::max<std::ptrdiff_t>(0, std::ptrdiff_t(all.size()) - kTimelineSteps));
  TimelineWindow w;
  for (auto i = first; i < std::ptrdiff_t(all.size()) && i < first + kTimelineSteps; ++i) w.steps.push_back(all[size_t(i)]);
  w.origin_us = LLONG_MAX;
  w.end_us = LLONG_MIN;
  for (const auto& [rank, r] : log.ranks) {
    const int64_t offset = r.hello ? r.hello->clock_offset_us : 0;
    for (const auto& s : r.steps)
      if (std::find(w.steps.begin(), w.steps.end(), s.step) != w.steps.end() && s.end_us > s.start_us) {
        w.origin_us = std::min(w.origin_us, s.start_us + offset);
        w.end_us = std::max(w.end_us, s.end_us + offset);
      }
  }
  if (w.end_us <= w.origin_us) return std::nullopt;
  return w;
}

std::string bar_title(int rank, Lane lane, const LaneBar& b, int64_t origin_us) {
  std::string t = "rank " + std::to_string(rank) + " " + std::string(analysis::lane_label(lane)) + ": " +
                  std::string(analysis::phase_label(b.phase));
  if (b.merged > 1)
    t += " ×" + std::to_string(b.merged);
  else if (!b.label.empty())
    t += " " + b.label;
  t += ", " + analysis::format_ms(static_cast<double>(b.end_us - b.start_us) / 1000.0) + " at " +
       analysis::format_ms(static_cast<double>(b.start_us - origin_us) / 1000.0);
  if (b.bytes > 0) t += "; " + analysis::format_gb(static_cast<double>(b.bytes));
  if (b.busbw_gbps > 0 && b.merged == 1) t += " at " + analysis::format_gbps(b.busbw_gbps);
  return t;
}

void timeline_figure(std::ostream& o, const TrialPanel& p, const TimelineWindow& w, double longest_ms,
                     std::set<Phase>& seen) {
  constexpr double kW = 900, kLabel = 92, kRow = 15, kBar = 11, kAxis = 30, kRight = 8;
  const double scale = (kW - kLabel - kRight) / (longest_ms * 1000.0);  // px per microsecond
  const double merge_gap_us = 0.6 / scale;                           // closer than 0.6 px: one bar
  const auto& log = p.stored->log;
  struct Row {
    int rank;
    Lane lane;
    std::vector<LaneBar> bars;
  };
  std::vector<Row> rows;
  int ranks_drawn = 0;
  for (const auto& [rank, r] : log.ranks) {
    if (ranks_drawn++ >= kMaxTimelineRanks) break;
    const int64_t offset = r.hello ? r.hello->clock_offset_us : 0;
    for (Lane lane : protocol::kLanes) {
      std::vector<LaneBar> bars;
      for (const auto& s : r.steps) {
        if (std::find(w.steps.begin(), w.steps.end(), s.step) == w.steps.end()) continue;
        for (const auto& in : s.intervals)
          if (in.lane == lane && in.end_us > in.start_us)
            bars.push_back({in.start_us + offset, in.end_us + offset, in.phase, in.label, in.bytes, in.busbw_gbps, 1});
      }
      if (bars.empty()) continue;  // a lane with nothing (one GPU's comm lane) is left out
      std::sort(bars.begin(), bars.end(), [](const LaneBar& a, const LaneBar& b) { return a.start_us < b.start_us; });
      std::vector<LaneBar> merged;
      for (auto& b : bars) {
        if (!merged.empty() && merged.back().phase == b.phase &&
            static_cast<double>(b.start_us - merged.back().end_us) < merge_gap_us) {
          auto& m = merged.back();
          m.end_us = std::max(m.end_us, b.end_us);
          m.bytes += b.bytes;
          ++m.merged;
        } else {
          merged.push_back(std::move(b));
        }
      }
      rows.push_back({rank, lane, std::move(merged)});
    }
  }
  const double height = kAxis + rows.size() * kRow + 6;
  auto X = [&](int64_t us) { return kLabel + static_cast<double>(us - w.origin_us) * scale; };
  std::string title = p.name + ": steps " + std::to_string(w.steps.front()) + "–" + std::to_string(w.steps.back()) +
                      " on every rank";
  o << "<figure><figcaption>" << swatch(p.rgb) << "<b>" << esc(p.name) << "</b> — steps " << w.steps.front() << "–"
    << w.steps.back() << ", " << esc(analysis::format_ms(static_cast<double>(w.end_us - w.origin_us) / 1000.0))
    << "</figcaption><div class=\"scroll\"><svg class=\"lanes\" viewBox=\"0 0 " << coord(kW) << " " << coord(height)
    << "\" role=\"img\" aria-label=\"" << esc(title) << "\"><title>" << esc(title) << "</title>";
  // Time axis on top, shared scale across trials.
  const auto ticks = nice_ticks(0, longest_ms, 8);
  const double step = ticks.size() > 1 ? ticks[1] - ticks[0] : 1;
  for (double t : ticks) {
    const double x = kLabel + t * 1000.0 * scale;
    if (x > kW - kRight + 0.5) continue;
    o << "<line class=\"grid\" x1=\"" << coord(x) << "\" x2=\"" << coord(x) << "\" y1=\"" << coord(kAxis - 4)
      << "\" y2=\"" << coord(height - 4) << "\"/><text class=\"ax small\" x=\"" << coord(x) << "\" y=\"12\" text-anchor=\"middle\">"
      << tick_label(t, step) << "</text>";
  }
  o << "<text class=\"ax small\" x=\"4\" y=\"12\">ms</text>";
  // Step starts (lowest rank), labelled.
  if (const auto r0 = log.ranks.begin(); r0 != log.ranks.end()) {
    const int64_t offset = r0->second.hello ? r0->second.hello->clock_offset_us : 0;
    for (const auto& s : r0->second.steps)
      if (std::find(w.steps.begin(), w.steps.end(), s.step) != w.steps.end()) {
        const double x = X(s.start_us + offset);
        o << "<line class=\"mark\" x1=\"" << coord(x) << "\" x2=\"" << coord(x) << "\" y1=\"" << coord(kAxis - 12)
          << "\" y2=\"" << coord(height - 4) << "\"/><text class=\"ax small\" x=\"" << coord(x + 3) << "\" y=\""
          << coord(kAxis - 5) << "\">step " << s.step << "</text>";
      }
  }
  for (size_t i = 0; i < rows.size(); ++i) {
    const auto& row = rows[i];
    const double y = kAxis + i * kRow;
    o << "<text class=\"ax small\" x=\"4\" y=\"" << coord(y + kBar - 1) << "\">r" << row.rank << " "
      << analysis::lane_label(row.lane) << "</text>";
    for (const auto& b : row.bars) {
      seen.insert(b.phase);
      const double x0 = X(b.start_us), x1 = X(b.end_us);
      const double wpx = std::max(1.0, x1 - x0);  // a microsecond's data wait still shows
      o << "<rect x=\"" << coord(x0) << "\" y=\"" << coord(y) << "\" width=\"" << coord(wpx) << "\" height=\""
        << coord(kBar) << "\" fill=\"" << css_rgb(analysis::phase_rgb(b.phase)) << "\">";
      if (wpx >= 1.5) o << "<title>" << esc(bar_title(row.rank, row.lane, b, w.origin_us)) << "</title>";
      o << "</rect>";
      // Collectives (and long compute phases) named where the bar has room.
      const std::string name = std::string(analysis::phase_label(b.phase));
      if (wpx >= 7.0 * name.size() + 8)
        o << "<text class=\"in\" x=\"" << coord(x0 + 3) << "\" y=\"" << coord(y + kBar - 2.5) << "\">" << esc(name)
          << "</text>";
    }
  }
  o << "</svg></div>";
  if (log.ranks.size() > size_t(kMaxTimelineRanks))
    o << "<p class=\"note\">The first " << kMaxTimelineRanks << " of " << log.ranks.size() << " ranks are drawn.</p>";
  o << "</figure>";
}

void timeline_section(std::ostream& o, const ReportContents& rc) {
  o << "<section id=\"timeline\"><h2>Timeline</h2><p class=\"note\">A few measured steps around each trial's "
       "representative step (the one closest to its median), every rank's host, compute and communication lanes on "
       "one clock; all trials share one time scale, so longer steps are longer bars.</p>";
  std::vector<std::optional<TimelineWindow>> windows;
  double longest = 0;
  for (const auto& p : rc.panels) {
    windows.push_back(timeline_window(p));
    if (windows.back()) longest = std::max(longest, static_cast<double>(windows.back()->end_us - windows.back()->origin_us) / 1000.0);
  }
  std::set<Phase> seen;
  for (size_t i = 0; i < rc.panels.size(); ++i) {
    if (windows[i])
      timeline_figure(o, rc.panels[i], *windows[i], longest, seen);
    else
      o << "<p>" << swatch(rc.panels[i].rgb) << "<b>" << esc(rc.panels[i].name)
        << "</b>: no measured step with a timeline.</p>";
  }
  o << "<ul class=\"legend\">";
  for (Phase ph : analysis::legend_phases())
    if (seen.count(ph)) o << "<li>" << swatch(analysis::phase_rgb(ph)) << esc(std::string(analysis::phase_label(ph))) << "</li>";
  o << "</ul></section>\n";
}

// ---- telemetry ---------------------------------------------------------------------------------

void telemetry_section(std::ostream& o, const ReportContents& rc) {
  struct Kind {
    const char* title;
    const char* axis;
    const char* unit;
    std::optional<double> (*get)(const protocol::GpuSample&);
    std::optional<double> y_max;
    bool host = false;  // a sample of the rank's process (index -1: /proc), not of a GPU (NVML)
  };
  const Kind kinds[] = {
      {"GPU utilisation", "utilisation (%)", "%", [](const protocol::GpuSample& g) { return g.util_pct; }, 100.0},
      {"GPU memory used", "memory used (GiB)", "GiB",
       [](const protocol::GpuSample& g) -> std::optional<double> {
         if (!g.mem_used_bytes) return std::nullopt;
         return static_cast<double>(*g.mem_used_bytes) / (1024.0 * 1024.0 * 1024.0);
       },
       std::nullopt},
      {"GPU power", "power (W)", "W", [](const protocol::GpuSample& g) { return g.power_w; }, std::nullopt},
      // The CPU and memory of each rank's process, sampled on every run (a CPU run has only these).
      {"Process CPU use", "CPU use (%, 100 = one core)", "%", [](const protocol::GpuSample& g) { return g.cpu_pct; },
       std::nullopt, true},
      {"Process memory (RSS)", "resident memory (GiB)", "GiB",
       [](const protocol::GpuSample& g) -> std::optional<double> {
         if (!g.rss_bytes) return std::nullopt;
         return static_cast<double>(*g.rss_bytes) / (1024.0 * 1024.0 * 1024.0);
       },
       std::nullopt, true},
  };
  o << "<section id=\"telemetry\"><h2>Telemetry</h2><p class=\"note\">What NVML reported for each GPU, and /proc "
       "for each rank's process (CPU use and resident memory), while the trial ran, against the time since the trial's first sample; the shaded span holds the measured steps "
       "(the first trial's).</p>";
  bool any_sample = false;
  for (const auto& k : kinds) {
    LineChart chart;
    chart.title = std::string(k.title) + " over time, every trial and " + (k.host ? "rank" : "GPU");
    chart.x_label = "time since the trial's first sample (s)";
    chart.y_label = k.axis;
    chart.y_unit = k.unit;
    chart.x_unit = "s";
    chart.y_max = k.y_max;
    bool band = false;
    for (size_t i = 0; i < rc.panels.size(); ++i) {
      const auto& log = rc.panels[i].stored->log;
      int64_t t0 = LLONG_MAX;
      for (const auto& [rank, r] : log.ranks) {
        const int64_t offset = r.hello ? r.hello->clock_offset_us : 0;
        for (const auto& s : r.samples)
          if ((s.value.index < 0) == k.host) t0 = std::min(t0, s.t_us + offset);
      }
      if (t0 == LLONG_MAX) continue;
      std::map<std::pair<int, int>, ChartSeries> by_gpu;  // (rank, device index)
      for (const auto& [rank, r] : log.ranks) {
        const int64_t offset = r.hello ? r.hello->clock_offset_us : 0;
        for (const auto& s : r.samples) {
          if ((s.value.index < 0) != k.host) continue;
          const auto v = k.get(s.value);
          if (!v || !std::isfinite(*v)) continue;
          auto& series = by_gpu[{rank, s.value.index}];
          series.points.push_back({static_cast<double>(s.t_us + offset - t0) / 1e6, *v, false});
        }
      }
      int n = 0;
      for (auto& [key, series] : by_gpu) {
        series.name = rc.panels[i].name + (k.host ? ", rank " + std::to_string(key.first)
                                                  : ", GPU " + std::to_string(key.second));
        series.rgb = rc.panels[i].rgb;
        series.dashed = n++ > 0 || i >= 8;
        series.break_gap = 2.0;  // seconds without a sample: no line across the gap
        chart.series.push_back(std::move(series));
        any_sample = true;
      }
      if (!band) {  // the measured steps of the first trial with samples
        int64_t lo = LLONG_MAX, hi = LLONG_MIN;
        for (const auto& [rank, r] : log.ranks) {
          const int64_t offset = r.hello ? r.hello->clock_offset_us : 0;
          for (const auto& s : r.steps)
            if (!s.warmup && s.end_us > s.start_us) {
              lo = std::min(lo, s.start_us + offset);
              hi = std::max(hi, s.end_us + offset);
            }
        }
        if (lo < hi) chart.bands.push_back({static_cast<double>(lo - t0) / 1e6, static_cast<double>(hi - t0) / 1e6, "measured"});
        band = true;
      }
    }
    if (chart.series.empty()) continue;
    o << "<figure><figcaption><b>" << k.title << "</b></figcaption><div class=\"scroll\">" << render_line_chart(chart)
      << "</div></figure>";
  }
  if (!any_sample) o << "<p>No telemetry was recorded (sampling off).</p>";
  else series_legend(o, rc, true);
  // The figures the comparison uses, per stored trial.
  o << "<div class=\"scroll\"><table><thead><tr><th>trial</th><th>GPU utilisation<small>mean over measured "
       "steps</small></th><th>peak memory<small>allocator peak, busiest rank</small></th><th>memory<small>of the "
       "device</small></th></tr></thead><tbody>";
  for (const auto& p : rc.panels) {
    const auto& m = p.metrics;
    o << "<tr><th>" << swatch(p.rgb) << esc(p.name) << "</th><td>"
      << (m.gpu_util_pct ? analysis::format_fixed(*m.gpu_util_pct, 0) + " %" : "—") << "</td><td>"
      << (m.peak_bytes > 0 ? esc(analysis::format_gib(static_cast<double>(m.peak_bytes))) : "—")
      << (m.peak_fraction ? "<small>" + esc(analysis::format_pct(*m.peak_fraction)) + " of the device</small>" : "")
      << "</td><td>"
      << (m.device_memory_bytes > 0 ? esc(analysis::format_gib(static_cast<double>(m.device_memory_bytes))) : "—")
      << "</td></tr>";
  }
  o << "</tbody></table></div></section>\n";
}

// ---- what the hardware says --------------------------------------------------------------------

void hardware_section(std::ostream& o, const ReportContents& rc) {
  o << "<section id=\"hardware\"><h2>What the hardware says</h2><p class=\"note\">Energy from NVML's energy "
       "counter over the measured steps (it advances about every 100 ms; ± is that bound), SM and tensor-core "
       "activity from NVML GPM (Hopper and newer), and memory by category from the CUDA caching allocator at the "
       "end of a memory-sampled step's forward or backward, beside the prediction's terms.</p>";
  std::vector<HardwareFigures> figures;
  for (const auto& p : rc.panels) figures.push_back(hardware_figures(*p.stored, p.metrics));
  o << "<div class=\"scroll\"><table><thead><tr><th>trial</th><th>energy<small>all GPUs, measured steps</small></th>"
       "<th>activity<small>mean over measured steps</small></th></tr></thead><tbody>";
  for (size_t i = 0; i < rc.panels.size(); ++i)
    o << "<tr><th>" << swatch(rc.panels[i].rgb) << esc(rc.panels[i].name) << "</th><td>" << esc(figures[i].energy)
      << "</td><td>" << esc(figures[i].activity) << "</td></tr>";
  o << "</tbody></table></div>";
  for (size_t i = 0; i < rc.panels.size(); ++i) {
    const HardwareFigures& h = figures[i];
    const std::string name = esc(rc.panels[i].name);
    if (h.memory) {
      o << "<h3>" << swatch(rc.panels[i].rgb) << name << ": memory at the end of the " << esc(h.memory_phase)
        << " of step " << h.memory_step << " (rank " << h.rank << ")</h3><div class=\"scroll\"><table><thead><tr>"
        << "<th>category</th><th>measured</th><th>predicted<small>at the predicted peak, "
        << esc(h.memory->predicted_peak_at) << "</small></th><th>the prediction's terms</th></tr></thead><tbody>";
      for (const auto& row : h.memory->rows) {
        std::string terms;
        for (const auto& t : row.terms) terms += (terms.empty() ? "" : "; ") + t;
        o << "<tr><th>" << esc(row.category) << "</th><td>" << esc(analysis::format_gib(static_cast<double>(row.measured_bytes)))
          << "</td><td>" << esc(analysis::format_gib(static_cast<double>(row.predicted_bytes))) << "</td><td>"
          << esc(terms) << "</td></tr>";
      }
      o << "<tr><th>all</th><td>" << esc(analysis::format_gib(static_cast<double>(h.memory->measured_total_bytes)))
        << "</td><td>" << esc(analysis::format_gib(static_cast<double>(h.memory->predicted_peak_bytes)))
        << "</td><td></td></tr><tr><th>reserved, held by no tensor</th><td>"
        << esc(analysis::format_gib(static_cast<double>(h.reserved_free_bytes))) << "</td><td>—</td><td></td></tr>";
      o << "</tbody></table></div>";
      if (!h.memory->unknown_terms.empty())
        o << "<p class=\"note\">Predicted terms without a measured category: "
          << esc(h.memory->unknown_terms.front()) << (h.memory->unknown_terms.size() > 1 ? " …" : "") << "</p>";
    } else {
      o << "<p>" << swatch(rc.panels[i].rgb) << "<b>" << name << "</b>: memory categories " << esc(h.memory_problem)
        << "</p>";
    }
    if (h.oom) {
      o << "<div class=\"finding\"><p><span class=\"kind\">out of memory</span><b>" << name << "</b></p><p>"
        << esc(h.oom->text) << "</p>";
      if (!h.oom->fixes.empty()) {
        o << "<ul class=\"try\">";
        for (const auto& f : h.oom->fixes)
          o << "<li>" << esc(f.change) << ": predicted "
            << esc(analysis::format_gib(static_cast<double>(f.predicted_device_needed_bytes))) << " needed"
            << (f.fits ? ", fits" : "") << "</li>";
        o << "</ul>";
      }
      o << "</div>";
    } else if (!h.oom_problem.empty()) {
      o << "<p>" << name << ": " << esc(h.oom_problem) << "</p>";
    }
  }
  o << "</section>\n";
}

// ---- diagnosis ---------------------------------------------------------------------------------

void findings(std::ostream& o, const std::vector<analysis::Finding>& list) {
  for (const auto& f : list) {
    o << "<div class=\"finding\"><p><span class=\"kind\">" << esc(std::string(analysis::to_string(f.kind)))
      << "</span><b>" << esc(f.title) << "</b></p>";
    if (!f.detail.empty()) o << "<p>" << esc(f.detail) << "</p>";
    if (!f.suggestions.empty()) {
      o << "<ul class=\"try\">";
      for (const auto& s : f.suggestions) o << "<li>Try <code>" << esc(s.title) << "</code>: " << esc(s.why) << "</li>";
      o << "</ul>";
    }
    o << "</div>";
  }
}

void diagnosis_section(std::ostream& o, const ReportContents& rc) {
  const auto& r = rc.report;
  const auto& c = r.comparison;
  o << "<section id=\"diagnosis\"><h2>Diagnosis</h2><p class=\"note\">Findings ranked by the step time they "
       "explain, with the communication floor and what to try, in numbers from these trials.</p>";
  for (const auto& p : r.pairs) {
    o << "<article><h3>Why " << esc(p.other_label) << " differs from " << esc(p.base_label) << "</h3><p>"
      << esc(p.headline) << "</p>";
    if (!p.throughput.empty()) o << "<p>" << esc(p.throughput) << "</p>";
    findings(o, p.findings);
    o << "</article>";
  }
  for (size_t i = 0; i < r.diagnoses.size(); ++i) {
    if (i != c.baseline && c.trials.size() > 1) continue;  // the others' findings are in their pair
    o << "<article><h3>Diagnosis of " << esc(r.diagnoses[i].label) << "</h3>";
    if (r.diagnoses[i].findings.empty()) o << "<p>" << esc(r.diagnoses[i].verdict) << "</p>";
    findings(o, r.diagnoses[i].findings);
    o << "</article>";
  }
  o << "</section>\n";
}

// ---- environment and reproduction --------------------------------------------------------------

std::vector<std::pair<std::string, std::string>> environment_of(const store::LoadedTrial& t) {
  const protocol::Hello* h = nullptr;
  std::set<std::string> hosts;
  std::map<std::string, std::string> env;
  for (const auto& [rank, r] : t.log.ranks) {
    if (!r.hello) continue;
    if (!h) h = &*r.hello;
    hosts.insert(r.hello->host);
    for (const auto& [k, v] : r.hello->env) env[k] = v;
  }
  if (!h) return {{"ranks", "no rank reported its environment"}};
  auto or_dash = [](const std::string& s) { return s.empty() ? std::string("—") : s; };
  std::string host_list;
  for (const auto& x : hosts) host_list += (host_list.empty() ? "" : ", ") + x;
  // The NCCL variables, and apart from them the worker's switches (TUNEBENCH_*, docs/PROTOCOL.md,
  // "Environment switches"): both change what a trial measures.
  std::string env_list, switch_list;
  for (const auto& [k, v] : env) {
    std::string& list = k.rfind("TUNEBENCH_", 0) == 0 ? switch_list : env_list;
    list += (list.empty() ? "" : "\n") + k + "=" + v;
  }
  return {{"GPU", or_dash(h->device) + (h->device_memory_bytes > 0
                                            ? " (" + analysis::format_gib(static_cast<double>(h->device_memory_bytes)) + ")"
                                            : "")},
          {"Driver", or_dash(h->driver)},
          {"CUDA", or_dash(h->cuda)},
          {"cuDNN", or_dash(h->cudnn)},
          {"NCCL", or_dash(h->nccl)},
          {"libtorch", or_dash(h->torch)},
          {"Backend", or_dash(h->backend)},
          {"Hosts", or_dash(host_list)},
          {"NCCL variables", or_dash(env_list)},
          {"Switches", or_dash(switch_list)}};
}

std::string multiline(const std::string& s) {
  std::string out;
  size_t from = 0;
  for (size_t at; (at = s.find('\n', from)) != std::string::npos; from = at + 1) out += esc(s.substr(from, at - from)) + "<br>";
  return out + esc(s.substr(from));
}

void environment_section(std::ostream& o, const ReportContents& rc) {
  std::vector<std::vector<std::pair<std::string, std::string>>> envs;
  for (const auto& p : rc.panels) envs.push_back(environment_of(*p.stored));
  const bool same = std::all_of(envs.begin(), envs.end(), [&](const auto& e) { return e == envs.front(); });
  o << "<section id=\"environment\"><h2>Environment</h2><p class=\"note\">As the ranks reported it (the lowest "
       "rank's versions; the NCCL variables and Tunebench's environment switches of every rank).</p><div class=\"scroll\"><table><thead><tr><th></th>";
  if (same) {
    o << "<th>" << (rc.panels.size() == 1 ? esc(rc.panels.front().name) : "all " + std::to_string(rc.panels.size()) + " trials")
      << "</th>";
  } else {
    for (const auto& p : rc.panels) o << "<th>" << swatch(p.rgb) << esc(p.name) << "</th>";
  }
  o << "</tr></thead><tbody>";
  for (size_t row = 0; row < envs.front().size(); ++row) {
    o << "<tr><th>" << esc(envs.front()[row].first) << "</th>";
    for (size_t i = 0; i < (same ? 1 : envs.size()); ++i)
      o << "<td class=\"text\">" << (row < envs[i].size() ? multiline(envs[i][row].second) : "—") << "</td>";
    o << "</tr>";
  }
  o << "</tbody></table></div></section>\n";
}

void reproduce_section(std::ostream& o, const ReportContents& rc) {
  o << "<section id=\"reproduce\"><h2>How to reproduce</h2><p class=\"note\">The worker command line of each "
       "trial: flags for the knobs that differ from the defaults (<code>tunebench-worker --help</code> lists them "
       "all).</p>";
  for (const auto& p : rc.panels) {
    const auto& info = p.stored->info;
    o << "<article><h3>" << swatch(p.rgb) << esc(p.name) << "</h3><p class=\"meta\">"
      << esc(std::string(protocol::to_string(info.status)));
    if (!info.exit_reason.empty()) o << ": " << esc(info.exit_reason);
    if (!info.source.empty()) o << " · " << esc(info.source);
    if (const auto d = date_of(info.start_us.value_or(info.created_us)); !d.empty()) o << " · " << d;
    o << "</p>";
    if (!info.tags.empty()) {
      o << "<p class=\"tags\">";
      for (const auto& t : info.tags) o << "<span>" << esc(t) << "</span>";
      o << "</p>";
    }
    if (!info.notes.empty()) o << "<p>" << multiline(info.notes) << "</p>";
    if (p.command_line.empty())
      o << "<p>No configuration was stored with this trial.</p>";
    else
      o << "<pre><code>" << esc(p.command_line) << "</code></pre>";
    if (!p.unknown_knobs.empty()) {
      std::string list;
      for (const auto& k : p.unknown_knobs) list += (list.empty() ? "" : ", ") + k;
      o << "<p class=\"note\">Imported from a trace: these settings are unknown and the line uses defaults for "
           "them: "
        << esc(list) << ".</p>";
    }
    o << "</article>";
  }
  o << "</section>\n";
}

}  // namespace

void write_html(const ReportContents& rc, const std::string& data_block, std::ostream& o) {
  const auto& c = rc.report.comparison;
  int64_t first_us = 0;
  for (const auto& p : rc.panels) {
    const int64_t t = p.stored->info.start_us.value_or(p.stored->info.created_us);
    if (t > 0 && (first_us == 0 || t < first_us)) first_us = t;
  }
  o << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
       "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
       "<meta name=\"generator\" content=\""
    << kGeneratorMeta
    << "\">\n"
       // Nothing is fetched and nothing runs: the session's text cannot become code or a request.
       "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
       "img-src data:; base-uri 'none'; form-action 'none'\">\n"
       "<meta name=\"color-scheme\" content=\"light dark\">\n<title>Tunebench report: "
    << esc(rc.title) << "</title>\n<style>" << kStyle << "</style>\n</head>\n<body>\n";
  o << "<header><p class=\"kicker\">Tunebench report</p><h1>" << esc(rc.title) << "</h1><p class=\"meta\">"
    << rc.panels.size() << (rc.panels.size() == 1 ? " trial" : " trials");
  if (c.trials.size() > 1) o << " · baseline " << esc(c.trials[c.baseline].label);
  if (const auto d = date_of(first_us); !d.empty()) o << " · recorded " << d;
  o << "</p></header>\n";
  o << "<p class=\"verdict\" id=\"verdict\">" << esc(rc.verdict) << "</p>\n";
  o << "<nav><ol><li><a href=\"#setup\">Configuration</a></li><li><a href=\"#metrics\">Metrics</a></li>"
       "<li><a href=\"#breakdown\">Breakdown</a></li><li><a href=\"#steps\">Step time</a></li>"
       "<li><a href=\"#timeline\">Timeline</a></li><li><a href=\"#telemetry\">Telemetry</a></li>"
       "<li><a href=\"#hardware\">Hardware</a></li>"
       "<li><a href=\"#diagnosis\">Diagnosis</a></li><li><a href=\"#environment\">Environment</a></li>"
       "<li><a href=\"#reproduce\">Reproduce</a></li></ol></nav>\n";
  setup_section(o, rc);
  metrics_section(o, rc);
  breakdown_section(o, rc);
  steps_section(o, rc);
  timeline_section(o, rc);
  telemetry_section(o, rc);
  hardware_section(o, rc);
  diagnosis_section(o, rc);
  environment_section(o, rc);
  reproduce_section(o, rc);
  o << "<footer><p>Made by Tunebench from the trials' recorded events: every figure is the same function's output "
       "as in the app's comparison window.";
  if (!data_block.empty())
    o << " This file carries those trials: open it in Tunebench (File › Open session…, or Import) or run "
         "<code>tunebench-cli import SESSION.tbsession this.html</code> to get them back with every step.";
  o << "</p></footer>\n";
  if (!data_block.empty()) o << data_block;
  o << "</body>\n</html>\n";
}

}  // namespace tunebench::report

#include "core/report/markdown_report.h"

#include <algorithm>
#include <cmath>

#include "core/analysis/diagnosis_text.h"
#include "core/analysis/format.h"
#include "core/report/hardware_figures.h"
#include "core/report/html_text.h"

namespace tunebench::report {

namespace {

using analysis::Part;

constexpr size_t kBarCells = 30;   // the longest step's bar (the block fits a comment box)
constexpr size_t kNameCells = 24;  // names in the bar block are cut to this

// One glyph per part, so the bars read without colour (a code block has none).
const char* glyph(Part p) {
  switch (p) {
    case Part::DataWait:
      return "~";
    case Part::HostToDevice:
      return ":";
    case Part::Forward:
      return "▓";
    case Part::Backward:
      return "█";
    case Part::Optimizer:
      return "▒";
    case Part::OtherCompute:
      return "=";
    case Part::ExposedComm:
      return "░";
    // GPU idle, told apart: the host was late, launches between kernels, a synchronisation
    case Part::HostWait:
      return "-";
    case Part::LaunchGap:
      return ",";
    case Part::SyncWait:
      return "!";
    case Part::DependencyWait:
      return "^";
    case Part::Idle:
      return "·";
  }
  return "?";
}

size_t width(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

// `s` in exactly `cells` code points: cut with "…" when longer, padded with spaces when shorter.
std::string fit(const std::string& s, size_t cells) {
  if (width(s) <= cells) return s + std::string(cells - width(s), ' ');
  std::string out;
  size_t n = 0;
  for (unsigned char c : s) {
    if ((c & 0xC0) != 0x80 && ++n == cells) break;  // the start of code point number `cells`
    out += static_cast<char>(c);
  }
  return out + "…";
}

struct Section {
  std::vector<std::string> head;   // always kept
  std::vector<std::string> items;  // cut from the end when the summary is too long
  std::vector<std::string> tail;   // always kept
  std::string more;                // "… and %zu more" line when cut ("{}" replaced by the count)
  size_t cap = SIZE_MAX;
  size_t lines() const {
    const size_t shown = std::min(cap, items.size());
    return head.size() + shown + tail.size() + (shown < items.size() ? 1 : 0);
  }
};

std::string cell(const std::string& s) { return markdown_escape(s); }

std::string fence_for(const std::vector<std::string>& lines) {
  size_t run = 0;
  for (const auto& l : lines) run = std::max(run, longest_backtick_run(l));
  return std::string(std::max<size_t>(3, run + 1), '`');
}

}  // namespace

void write_markdown(const ReportContents& rc, std::ostream& out) {
  const auto& c = rc.report.comparison;
  const auto& ts = c.trials;
  const bool several = ts.size() > 1;
  std::vector<Section> sections;

  Section top;
  top.head = {"### Tunebench report: " + cell(rc.title), "", "**Verdict:** " + cell(rc.verdict), ""};
  sections.push_back(top);

  // The table: one row per compared trial, the figures a reader asks for first.
  const analysis::MetricRow* step = metric_row(c, "step_ms");
  const analysis::MetricRow* tput = metric_row(c, "tokens_per_s_total");
  const analysis::MetricRow* exposed = metric_row(c, "exposed_comm_ms");
  const analysis::MetricRow* peak = metric_row(c, "peak_gib");
  auto value = [](const analysis::MetricRow* row, size_t i, const std::string& unit) -> std::string {
    if (!row || !row->values[i]) return "—";
    const auto& v = *row->values[i];
    std::string s = analysis::format_metric_value(v.median, row->unit) + " " + unit;
    if (v.n > 1 && v.p25 != v.p75)
      s += " (" + analysis::format_metric_value(v.p25, row->unit) + "–" + analysis::format_metric_value(v.p75, row->unit) + ")";
    return s;
  };
  Section table;
  table.head = {std::string("| Trial | Devices | Step time, ms (p25–p75) | Throughput, total | ") +
                    (several ? "vs baseline | " : "") + "Exposed comm | Peak memory |",
                std::string("|:--|--:|--:|--:|") + (several ? "--:|" : "") + "--:|--:|"};
  for (size_t i = 0; i < ts.size(); ++i) {
    const auto& t = ts[i];
    std::string ratio = "—";
    if (i == c.baseline) ratio = "baseline";
    else if (tput && tput->ratio[i]) ratio = analysis::format_ratio(*tput->ratio[i]);
    std::string step_text = "—";
    if (step && step->values[i]) {
      const auto& v = *step->values[i];
      step_text = analysis::format_metric_value(v.median, "ms");
      if (v.n > 1 && v.p25 != v.p75)
        step_text += " (" + analysis::format_metric_value(v.p25, "ms") + "–" + analysis::format_metric_value(v.p75, "ms") + ")";
    }
    table.items.push_back("| " + cell(t.label) + " | " + cell(analysis::devices_text(t)) +
                          " | " + step_text + " | " + value(tput, i, "tokens/s") + " | " + (several ? ratio + " | " : "") +
                          value(exposed, i, "ms") + " | " + value(peak, i, "GiB") + " |");
  }
  table.tail = {""};
  table.more = "| … {} more trials in the HTML report | | | | |";
  sections.push_back(table);
  const size_t table_index = sections.size() - 1;
  size_t bars_index = SIZE_MAX, diag_index = SIZE_MAX, repro_index = SIZE_MAX;

  // The breakdown as text bars on one scale.
  double longest = 0;
  for (const auto& t : ts) longest = std::max(longest, t.breakdown.step_ms);
  if (longest > 0) {
    Section bars;
    std::vector<std::string> lines;
    std::vector<bool> seen(analysis::kPartCount, false);
    for (const auto& t : ts) {
      const auto& b = t.breakdown;
      std::string bar;
      double acc = 0;
      size_t drawn = 0;
      for (Part p : analysis::kAllParts) {
        acc += b[p];
        const size_t upto = static_cast<size_t>(std::lround(acc / longest * kBarCells));
        for (; drawn < upto; ++drawn) bar += glyph(p);
        if (b[p] > 0) seen[static_cast<size_t>(p)] = true;
      }
      lines.push_back(fit(code_text(t.label), kNameCells) + " " + bar + std::string(kBarCells - std::min(kBarCells, drawn), ' ') +
                      "  " + analysis::format_ms(b.step_ms));
    }
    std::string legend;
    for (Part p : analysis::kAllParts)
      if (seen[static_cast<size_t>(p)]) legend += std::string(legend.empty() ? "" : "  ") + glyph(p) + " " + std::string(analysis::label(p));
    lines.push_back(legend);
    const std::string fence = fence_for(lines);
    bars.head = {"**Where the step goes** (mean per measured step on the critical rank; the parts add up to the step)",
                 "", fence + "text"};
    bars.items.assign(lines.begin(), lines.end() - 1);
    bars.tail = {lines.back(), fence, ""};
    bars.more = "… {} more trials in the HTML report";
    sections.push_back(bars);
    bars_index = sections.size() - 1;
  }

  // The diagnosis: each comparison's headline with its first suggestion, and the baseline's verdict.
  Section diag;
  diag.head = {"**Diagnosis**", ""};
  for (const auto& p : rc.report.pairs) {
    // The headline names both trials ("X step +777 ms over Y (mean): exposed all-reduce +687 ms …").
    std::string line = "- " + cell(p.headline);
    if (!p.headline.empty() && p.headline.back() != '.') line += ".";
    for (const auto& f : p.findings)
      if (!f.suggestions.empty()) {
        const std::string why = cell(f.suggestions.front().why);
        line += " Try `" + code_text(f.suggestions.front().title) + "`: " + why + (why.empty() || why.back() == '.' ? "" : ".");
        break;
      }
    diag.items.push_back(line);
  }
  if (!rc.report.diagnoses.empty()) {
    const auto& d = rc.report.diagnoses[c.baseline];
    if (!d.verdict.empty()) diag.items.push_back("- **" + cell(d.label) + "**: " + cell(d.verdict));
  }
  diag.tail = {""};
  diag.more = "- … {} more in the HTML report";
  if (!diag.items.empty()) {
    sections.push_back(diag);
    diag_index = sections.size() - 1;
  }

  // What the hardware says: energy, activity, memory by category and an out-of-memory explained.
  Section hw;
  hw.head = {"**What the hardware says**", ""};
  for (const auto& p : rc.panels) {
    const HardwareFigures h = hardware_figures(*p.stored, p.metrics);
    std::string line = "- **" + cell(p.name) + "**: energy " + cell(h.energy) + "; activity " + cell(h.activity);
    if (h.memory) {
      line += "; memory at the " + cell(h.memory_phase) + " of step " + std::to_string(h.memory_step) + ":";
      for (const auto& row : h.memory->rows)
        if (row.measured_bytes > 0 || row.predicted_bytes > 0)
          line += " " + cell(row.category) + " " + analysis::format_gib(static_cast<double>(row.measured_bytes)) +
                  " (predicted " + analysis::format_gib(static_cast<double>(row.predicted_bytes)) + "),";
      line.back() = '.';
    } else {
      line += "; memory categories " + cell(h.memory_problem) + ".";
    }
    hw.items.push_back(line);
    if (h.oom) hw.items.push_back("  - " + cell(h.oom->text));
    else if (!h.oom_problem.empty()) hw.items.push_back("  - " + cell(h.oom_problem));
  }
  hw.tail = {""};
  hw.more = "- … {} more in the HTML report";
  size_t hw_index = SIZE_MAX;
  if (!hw.items.empty()) {
    sections.push_back(hw);
    hw_index = sections.size() - 1;
  }

  // The command lines, folded.
  Section repro;
  std::vector<std::string> commands;
  for (const auto& p : rc.panels)
    if (!p.command_line.empty()) commands.push_back(code_text(p.command_line) + "  # " + code_text(p.name));
  if (!commands.empty()) {
    const std::string fence = fence_for(commands);
    repro.head = {"<details><summary>How to reproduce (worker command lines)</summary>", "", fence + "sh"};
    repro.items = commands;
    repro.tail = {fence, "", "</details>", ""};
    repro.more = "# … {} more in the HTML report";
    sections.push_back(repro);
    repro_index = sections.size() - 1;
  }

  Section foot;
  foot.head = {"<sub>Made by Tunebench from the recorded events. The HTML report has the plots, every rank's "
               "timeline and the trials themselves.</sub>"};
  sections.push_back(foot);
  auto at = [&](size_t i) { return i < sections.size() ? &sections[i] : nullptr; };
  Section* table_at = at(table_index);
  Section* bars_at = at(bars_index);
  Section* diag_at = at(diag_index);
  Section* repro_at = at(repro_index);
  Section* hw_at = at(hw_index);

  // Fit kMaxMarkdownLines: cut the command lines first, then the diagnosis, the bars and last the
  // table, each down to a few items before the next is touched.
  auto total = [&] {
    size_t n = 0;
    for (const auto& s : sections) n += s.lines();
    return n;
  };
  for (size_t floor : {size_t(3), size_t(1)})
    for (Section* s : {repro_at, hw_at, diag_at, bars_at, table_at}) {
      if (!s) continue;
      while (total() > kMaxMarkdownLines && std::min(s->cap, s->items.size()) > floor)
        s->cap = std::min(s->cap, s->items.size()) - 1;
    }

  for (const auto& s : sections) {
    for (const auto& l : s.head) out << l << "\n";
    const size_t shown = std::min(s.cap, s.items.size());
    for (size_t i = 0; i < shown; ++i) out << s.items[i] << "\n";
    if (shown < s.items.size()) {
      std::string more = s.more;
      const size_t at = more.find("{}");
      if (at != std::string::npos) more.replace(at, 2, std::to_string(s.items.size() - shown));
      out << more << "\n";
    }
    for (const auto& l : s.tail) out << l << "\n";
  }
}

}  // namespace tunebench::report

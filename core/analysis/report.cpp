// make_report and the text rendering of a report.
#include "core/analysis/report.h"

#include <algorithm>
#include <sstream>

#include "core/analysis/format.h"

namespace tunebench::analysis {

Report make_report(std::vector<TrialMetrics> trials, std::optional<size_t> baseline) {
  Report r;
  const size_t base = baseline.value_or(default_baseline(trials));
  r.comparison = compare(std::move(trials), base);
  const auto& ts = r.comparison.trials;
  for (const auto& t : ts)
    r.diagnoses.push_back(diagnose(t));
  for (size_t i = 0; i < ts.size(); ++i)
    if (i != r.comparison.baseline) r.pairs.push_back(diagnose_pair(ts[r.comparison.baseline], ts[i]));
  return r;
}

Report make_report(const std::vector<protocol::TrialLog>& logs, std::optional<size_t> baseline,
                   const std::vector<std::string>& names) {
  return make_report(analyze_grouped(logs, names), baseline);
}

namespace {

// A plain text table: first column left-aligned, the others right-aligned.
class TextTable {
 public:
  void row(std::vector<std::string> cells) { m_rows.push_back(std::move(cells)); }
  std::string render(const std::string& indent = "  ") const {
    std::vector<size_t> width;
    for (const auto& r : m_rows)
      for (size_t i = 0; i < r.size(); ++i) {
        if (width.size() <= i) width.push_back(0);
        width[i] = std::max(width[i], display_width(r[i]));
      }
    std::string out;
    for (const auto& r : m_rows) {
      std::string line = indent;
      for (size_t i = 0; i < r.size(); ++i) {
        const std::string pad(width[i] - display_width(r[i]), ' ');
        line += i == 0 ? r[i] + pad : "  " + pad + r[i];
      }
      while (!line.empty() && line.back() == ' ')
        line.pop_back();
      out += line + "\n";
    }
    return out;
  }

 private:
  // UTF-8 code points, so "µs" and "–" line up.
  static size_t display_width(const std::string& s) {
    size_t n = 0;
    for (unsigned char c : s)
      n += (c & 0xC0) != 0x80;
    return n;
  }
  std::vector<std::vector<std::string>> m_rows;
};

std::string trial_heading(const TrialMetrics& t) {
  std::string s = t.label;
  if (t.repeat_ids.size() > 1) s += " (" + std::to_string(t.repeat_ids.size()) + " repeats)";
  return s;
}

void render_findings(std::ostringstream& out, const std::vector<Finding>& findings) {
  int i = 0;
  for (const auto& f : findings) {
    out << "  " << ++i << ". [" << to_string(f.kind) << "] " << f.title << "\n";
    if (!f.detail.empty()) out << "     " << f.detail << "\n";
    for (const auto& s : f.suggestions)
      out << "     try: " << s.title << " (" << s.why << ")\n";
  }
}

}  // namespace

std::string render_text(const Report& report) {
  const Comparison& c = report.comparison;
  std::ostringstream out;
  if (c.trials.empty()) return "No trials to report.\n";
  const auto& trials = c.trials;
  out << "Tunebench report: " << trials.size() << " trial" << (trials.size() == 1 ? "" : "s") << ", baseline "
      << trials[c.baseline].label << "\n";
  for (const auto& t : trials) {
    out << "  " << trial_heading(t) << ": " << (t.device.empty() ? "device unknown" : t.device) << " x" << t.world_size
        << ", " << t.measured_steps << " measured steps\n";
    for (const auto& n : t.notes)
      out << "    note: " << n << "\n";
  }

  if (!c.config_diff.empty()) {
    out << "\nConfiguration (knobs that differ)\n";
    TextTable table;
    std::vector<std::string> head{"knob"};
    for (const auto& t : trials)
      head.push_back(t.label);
    table.row(head);
    for (const auto& d : c.config_diff) {
      std::vector<std::string> row{d.label + " (" + d.key + ")"};
      for (const auto& v : d.values)
        row.push_back(v.empty() ? "-" : v);
      table.row(row);
    }
    out << table.render();
  }

  out << "\nMetrics: median [p25–p75] over measured steps; ratio to " << trials[c.baseline].label << "\n";
  {
    TextTable table;
    std::vector<std::string> head{"metric"};
    for (size_t i = 0; i < trials.size(); ++i) {
      head.push_back(trials[i].label);
      if (i != c.baseline && trials.size() > 1) head.push_back("ratio");
    }
    table.row(head);
    for (const auto& m : c.metrics) {
      std::vector<std::string> row{m.label + " (" + m.unit + ")"};
      for (size_t i = 0; i < trials.size(); ++i) {
        row.push_back(m.values[i] ? format_metric_spread(*m.values[i], m.unit) : "-");
        if (i != c.baseline && trials.size() > 1) row.push_back(m.ratio[i] ? format_ratio(*m.ratio[i]) : "");
      }
      table.row(row);
    }
    if (c.single_reference && std::any_of(c.scaling_efficiency.begin(), c.scaling_efficiency.end(),
                                          [](const std::optional<double>& e) { return e.has_value(); })) {
      std::vector<std::string> row{"Scaling efficiency (%)"};
      for (size_t i = 0; i < trials.size(); ++i) {
        row.push_back(c.scaling_efficiency[i] ? format_fixed(*c.scaling_efficiency[i] * 100.0, 1) : "-");
        if (i != c.baseline && trials.size() > 1) row.push_back("");
      }
      table.row(row);
    }
    out << table.render();
  }

  out << "\nPhase breakdown: mean ms per step on the critical rank (parts add up to the step)\n";
  {
    TextTable table;
    std::vector<std::string> head{"part"};
    for (const auto& t : trials)
      head.push_back(t.label);
    table.row(head);
    for (Part p : kAllParts) {
      std::vector<std::string> row{std::string(label(p))};
      bool any = false;
      for (const auto& t : trials) {
        row.push_back(format_fixed(t.breakdown[p], 1));
        any = any || t.breakdown[p] > 0;
      }
      if (any || p == Part::Idle) table.row(row);
    }
    std::vector<std::string> total{"step"};
    for (const auto& t : trials)
      total.push_back(format_fixed(t.breakdown.step_ms, 1));
    table.row(total);
    // GPU busy: the union of kernel/memcpy/memset intervals (kernel-sampled steps only).
    std::vector<std::string> busy{"GPU busy (kernels, %)"};
    bool any_busy = false;
    for (const auto& t : trials) {
      busy.push_back(t.gpu_busy_share ? format_fixed(*t.gpu_busy_share * 100.0, 1) : "unknown");
      any_busy = any_busy || t.gpu_busy_share.has_value();
    }
    if (any_busy) table.row(busy);
    out << table.render();
    for (const auto& t : trials)
      if (t.sample_use == SampleUse::Scaled)
        out << "  " << t.label << ": the breakdown is that of its " << t.sampled_steps
            << " kernel-sampled steps (their compute is the time kernels ran), scaled to its unsampled steps, "
               "with which they agree.\n";
  }

  if (!c.throughput_statements.empty()) {
    out << "\nStep time vs throughput\n";
    for (const auto& s : c.throughput_statements)
      out << "  " << s << "\n";
  }

  for (const auto& p : report.pairs) {
    // The feasibility statement is the detail of the pair's scaling finding.
    out << "\nWhy " << p.other_label << " differs from " << p.base_label << "\n  " << p.headline << "\n";
    render_findings(out, p.findings);
  }
  for (size_t i = 0; i < report.diagnoses.size(); ++i) {
    // A compared trial's own findings are already listed in its pair section.
    if (i != c.baseline && trials.size() > 1) continue;
    out << "\nDiagnosis of " << report.diagnoses[i].label << "\n";
    if (report.diagnoses[i].findings.empty()) out << "  " << report.diagnoses[i].verdict << "\n";
    render_findings(out, report.diagnoses[i].findings);
  }
  return out.str();
}

std::string render_text(const SweepTable& table) {
  TextTable t;
  std::vector<std::string> head = table.keys;
  for (const char* h :
       {"repeats", "step ms", "tokens/s per rank", "tokens/s total", "MFU %", "exposed comm ms", "peak GiB", "tokens/J"})
    head.push_back(h);
  t.row(head);
  for (const auto& r : table.rows) {
    std::vector<std::string> row = r.values;
    row.push_back(std::to_string(r.repeats));
    if (r.failed) {
      row.push_back("failed");
    } else {
      row.push_back(format_metric_spread(r.step_ms, "ms"));
      row.push_back(format_metric_spread(r.tokens_per_s_per_gpu, "tokens/s"));
      row.push_back(format_metric_spread(r.tokens_per_s_total, "tokens/s"));
      row.push_back(r.mfu ? format_fixed(*r.mfu * 100.0, 1) : "-");
      row.push_back(format_metric_spread(r.exposed_comm_ms, "ms"));
      row.push_back(r.peak_bytes > 0 ? format_fixed(static_cast<double>(r.peak_bytes) / (1024.0 * 1024.0 * 1024.0), 1)
                                     : "-");
      row.push_back(r.tokens_per_joule ? format_fixed(*r.tokens_per_joule, 1) : "-");
    }
    t.row(row);
  }
  return t.render("");
}

}  // namespace tunebench::analysis

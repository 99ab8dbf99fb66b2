#include "core/report/report_contents.h"

#include <algorithm>
#include <set>
#include <stdexcept>

#include "core/analysis/diagnosis_text.h"
#include "core/analysis/format.h"
#include "core/analysis/phase_style.h"
#include "core/config/known_settings.h"
#include "core/launch/launch_plan.h"
#include "core/predict/link_model.h"

namespace tunebench::report {

namespace {

using analysis::format_ratio;

std::string display_name(const store::LoadedTrial& t) {
  if (!t.info.name.empty()) return t.info.name;
  if (!t.info.run_id.empty()) return t.info.run_id;
  return "trial " + std::to_string(t.info.id);
}

std::string tokens_per_s(double v) { return analysis::format_count(v) + " tokens/s"; }

// What the ranks of `log` talked over: backend, hosts, the NCCL variables that change the path and
// the topology NVML reported.
std::string link_text(const protocol::TrialLog& log, int world_size) {
  if (world_size <= 1) return "none (one rank)";
  std::string backend;
  std::string topology;
  std::set<std::string> hosts;
  std::map<std::string, std::string> env;
  for (const auto& [rank, r] : log.ranks) {
    if (!r.hello) continue;
    if (backend.empty()) backend = r.hello->backend;
    if (topology.empty()) topology = r.hello->topology;
    hosts.insert(r.hello->host);
    for (const auto& [k, v] : r.hello->env) env[k] = v;
  }
  std::string s = backend.empty() ? std::string("unknown backend") : backend;
  s += ", " + std::to_string(std::max<size_t>(1, hosts.size())) + (hosts.size() > 1 ? " hosts" : " host");
  std::string path;
  for (const auto& [k, v] : env)
    if (predict::changes_link_path(k)) path += (path.empty() ? "" : ", ") + k + "=" + v;
  s += path.empty() ? ", NCCL's default path" : ", " + path;
  if (!topology.empty()) s += "; " + topology;
  return s;
}

}  // namespace

const analysis::MetricRow* metric_row(const analysis::Comparison& c, const std::string& key) {
  for (const auto& m : c.metrics)
    if (m.key == key) return &m;
  return nullptr;
}

std::string parameter_text(int64_t parameters) {
  if (parameters <= 0) return "";
  const double p = static_cast<double>(parameters);
  if (p >= 1e9) return analysis::format_significant(p / 1e9, 3) + " B parameters";
  if (p >= 1e6) return analysis::format_significant(p / 1e6, 3) + " M parameters";
  return analysis::format_count(p) + " parameters";
}

std::string headline_verdict(const analysis::Report& report) {
  const analysis::Comparison& c = report.comparison;
  if (c.trials.empty()) return "No trials to report.";
  const auto& ts = c.trials;
  const analysis::MetricRow* tput = metric_row(c, "tokens_per_s_total");
  const analysis::MetricRow* step = metric_row(c, "step_ms");
  auto value = [](const analysis::MetricRow* row, size_t i) -> std::optional<double> {
    if (!row || !row->values[i]) return std::nullopt;
    return row->values[i]->median;
  };

  if (ts.size() == 1) {
    std::string s = ts[0].label;
    if (const auto ms = value(step, 0)) s += " takes " + analysis::format_ms(*ms) + " per step";
    if (const auto t = value(tput, 0)) s += " at " + tokens_per_s(*t) + " in total";
    const auto& d = report.diagnoses.front();
    return s + (d.verdict.empty() ? std::string(".") : ": " + d.verdict + (d.verdict.back() == '.' ? "" : "."));
  }

  // Throughput when the trials carry tokens, else step time (lower is better).
  const bool by_tput = tput && std::any_of(tput->values.begin(), tput->values.end(), [](const auto& v) { return bool(v); });
  const analysis::MetricRow* row = by_tput ? tput : step;
  if (!row) return "The trials have no measured steps to compare.";
  std::optional<size_t> best, worst;
  for (size_t i = 0; i < ts.size(); ++i) {
    const auto v = value(row, i);
    if (!v) continue;
    if (!best || (by_tput ? *v > *value(row, *best) : *v < *value(row, *best))) best = i;
    if (!worst || (by_tput ? *v < *value(row, *worst) : *v > *value(row, *worst))) worst = i;
  }
  if (!best) return "The trials have no measured steps to compare.";
  const size_t base = c.baseline;
  const std::string base_label = ts[base].label;
  std::string s;
  if (by_tput) {
    s = ts[*best].label + " delivers the most throughput, " + tokens_per_s(*value(row, *best)) + " in total";
    if (*best != base && row->ratio[*best])
      s += " (" + format_ratio(*row->ratio[*best]) + " " + base_label + ")";
  } else {
    s = ts[*best].label + " has the shortest step, " + analysis::format_ms(*value(row, *best));
    if (*best != base && row->ratio[*best]) s += " (" + format_ratio(*row->ratio[*best]) + " " + base_label + "'s)";
  }
  if (worst && *worst != *best) {
    const size_t w = *worst;
    if (w == base) {
      s += "; " + base_label + (by_tput ? " has the least throughput" : " has the longest step");
    } else {
      const auto ratio = row->ratio[w];
      s += "; " + ts[w].label + (by_tput ? " reaches only " : " takes ") +
           (ratio ? format_ratio(*ratio) : analysis::format_significant(*value(row, w), 3)) +
           (ratio ? " of " + base_label + (by_tput ? "'s throughput" : "'s step time") : std::string());
      // The part of the step that grew most, from the pair's breakdown delta.
      for (const auto& p : report.pairs) {
        if (p.other_label != ts[w].label || p.base_label != base_label) continue;
        for (const auto& d : p.deltas)
          if (d.delta_ms > 0) {
            const std::string part = d.part == analysis::Part::ExposedComm
                                         ? "exposed " + analysis::collective_name(ts[w])
                                         : std::string(analysis::label(d.part));
            s += ", its step spending " + analysis::format_ms(d.delta_ms) + " more on " + part;
            break;
          }
        break;
      }
    }
  }
  return s + ".";
}

ReportContents make_contents(const std::vector<store::LoadedTrial>& trials, const ReportOptions& options) {
  if (trials.empty()) throw std::invalid_argument("a report needs at least one trial");
  ReportContents rc;
  std::vector<protocol::TrialLog> logs;
  std::vector<std::string> names;
  std::set<std::string> ids;
  for (size_t i = 0; i < trials.size(); ++i) {
    logs.push_back(trials[i].log);
    // Run ids tie the pooled comparison back to stored trials: they must be there and distinct.
    std::string& id = logs.back().trial;
    if (id.empty() || ids.count(id)) id = "trial " + std::to_string(trials[i].info.id) + " #" + std::to_string(i + 1);
    ids.insert(id);
    names.push_back(display_name(trials[i]));
  }
  rc.report = analysis::make_report(logs, options.baseline, names);

  for (size_t i = 0; i < trials.size(); ++i) {
    TrialPanel p;
    p.stored = &trials[i];
    p.name = names[i];
    p.metrics = analysis::analyze(logs[i]);
    p.metrics.label = p.name;
    p.rgb = analysis::series_rgb(static_cast<int>(i));
    const nlohmann::json& cfg = trials[i].info.config;
    if (cfg.is_object() && !cfg.empty()) {
      const auto parsed = config::from_json(cfg);
      p.command_line = launch::worker_command_line(parsed.config);
      p.unknown_knobs = config::unknown_knobs(cfg);
    }
    rc.panels.push_back(std::move(p));
  }
  const auto& cts = rc.report.comparison.trials;
  for (const auto& ct : cts) {
    size_t at = 0;
    const std::string& first = ct.repeat_ids.empty() ? ct.trial : ct.repeat_ids.front();
    for (size_t i = 0; i < logs.size(); ++i)
      if (logs[i].trial == first) {
        at = i;
        break;
      }
    rc.first_panel.push_back(at);
  }

  if (!options.title.empty()) {
    rc.title = options.title;
  } else {
    for (size_t i = 0; i < cts.size() && i < 4; ++i) rc.title += (i ? ", " : "") + cts[i].label;
    if (cts.size() > 4) rc.title += " and " + std::to_string(cts.size() - 4) + " more";
  }
  rc.verdict = headline_verdict(rc.report);

  TableRow model{"Model", {}}, world{"World size", {}}, gpus{"Devices", {}}, link{"Link", {}};
  for (size_t g = 0; g < cts.size(); ++g) {
    const auto& t = cts[g];
    std::string m = t.knows({"model"}) ? config::knob_text(*t.config, "model") : std::string("unknown");
    if (const auto p = parameter_text(t.parameters); !p.empty()) m += ", " + p;
    model.values.push_back(m);
    world.values.push_back(std::to_string(t.world_size) + (t.world_size == 1 ? " rank" : " ranks"));
    std::string dev = analysis::devices_text(t);
    if (t.device_memory_bytes > 0) dev += " (" + analysis::format_gib(static_cast<double>(t.device_memory_bytes)) + ")";
    gpus.values.push_back(dev);
    link.values.push_back(link_text(trials[rc.first_panel[g]].log, t.world_size));
  }
  rc.setup = {model, world, gpus, link};
  for (const auto& d : rc.report.comparison.config_diff) {
    if (d.key == "model" || d.key == "world_size" || d.key == "name") continue;
    TableRow row{d.label, {}};
    for (const auto& v : d.values) row.values.push_back(v.empty() ? "—" : v);
    rc.config_diff.push_back(std::move(row));
  }
  return rc;
}

}  // namespace tunebench::report

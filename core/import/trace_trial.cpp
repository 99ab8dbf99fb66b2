#include "core/import/trace_trial.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstring>
#include <map>

#include "core/analysis/phase_breakdown.h"
#include "core/analysis/statistics.h"
#include "core/config/known_settings.h"
#include "core/import/torch_trace_reader.h"
#include "core/import/trace_error.h"

namespace tunebench::import {
namespace {

std::string steps_text(const RankTrace& r) {
  return "ProfilerStep#" + std::to_string(r.first_step_number) +
         (r.last_step_number != r.first_step_number ? "–#" + std::to_string(r.last_step_number) : "");
}

// The done summary of one rank, from the analysis' own definitions (phase_breakdown, statistics).
protocol::Done summary_of(const std::vector<protocol::Step>& steps) {
  std::vector<double> step_ms, comm_ms, exposed_ms, wait_ms;
  for (const auto& s : steps) {
    const auto b = analysis::breakdown_of(s);
    step_ms.push_back(static_cast<double>(b.step_us) / 1000.0);
    comm_ms.push_back(static_cast<double>(b.comm_us) / 1000.0);
    exposed_ms.push_back(static_cast<double>(b.exposed_comm_us()) / 1000.0);
    wait_ms.push_back(static_cast<double>(b[analysis::Part::DataWait]) / 1000.0);
  }
  protocol::Done d;
  const auto spread = analysis::spread_of(step_ms);
  d.summary.measured_steps = spread.n;
  d.summary.step_ms_median = spread.median;
  d.summary.step_ms_p25 = spread.p25;
  d.summary.step_ms_p75 = spread.p75;
  d.summary.comm_ms_median = analysis::spread_of(comm_ms).median;
  d.summary.exposed_comm_ms_median = analysis::spread_of(exposed_ms).median;
  d.summary.data_wait_ms_median = analysis::spread_of(wait_ms).median;
  d.summary.mfu = -1.0;  // tokens and model size are not in a trace
  return d;
}

void check_ranks(const std::vector<RankTrace>& ranks) {
  for (size_t i = 0; i < ranks.size(); ++i)
    for (size_t j = i + 1; j < ranks.size(); ++j) {
      const RankTrace& a = ranks[i];
      const RankTrace& b = ranks[j];
      const std::string pair = file_name(a.path) + " and " + file_name(b.path);
      if (!a.trace_id.empty() && a.trace_id == b.trace_id)
        throw TraceError(pair + " are the same trace (trace id " + a.trace_id + "); give each rank's trace once.");
      if (a.hello.world_size != b.hello.world_size)
        throw TraceError(pair + " are not from one run: world size " + std::to_string(a.hello.world_size) + " vs " +
                         std::to_string(b.hello.world_size) + " (distributedInfo).");
      if (a.rank == b.rank)
        throw TraceError(pair + " are both rank " + std::to_string(a.rank) +
                         (a.has_distributed_info ? "."
                                                 : ": traces without distributedInfo are single-GPU runs (rank 0 of "
                                                   "1); import each as its own trial."));
      if (a.first_step_number != b.first_step_number || a.last_step_number != b.last_step_number ||
          a.steps.size() != b.steps.size())
        throw TraceError(pair + " are not the same profiling window: rank " + std::to_string(a.rank) + " has " +
                         steps_text(a) + ", rank " + std::to_string(b.rank) + " has " + steps_text(b) + ".");
      const int64_t a0 = a.steps.front().start_us, a1 = a.steps.back().end_us;
      const int64_t b0 = b.steps.front().start_us, b1 = b.steps.back().end_us;
      if (a1 < b0 || b1 < a0)
        throw TraceError(pair + " were recorded " + std::to_string((std::llabs(b0 - a0) + 500000) / 1000000) +
                         " s apart and do not overlap in time: they are not the ranks of one run.");
    }
  for (const RankTrace& r : ranks)
    if (r.rank >= r.hello.world_size)
      throw TraceError(file_name(r.path) + " is rank " + std::to_string(r.rank) + " of a world of " +
                       std::to_string(r.hello.world_size) + ", which has no such rank.");
}

}  // namespace

std::pair<std::string, std::string> split_setting(const std::string& text) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0)
    throw TraceError("a setting is key=value (e.g. micro_batch=8), got '" + text + "'");
  auto trim = [](std::string s) {
    const auto a = s.find_first_not_of(" \t"), b = s.find_last_not_of(" \t");
    return a == std::string::npos ? std::string() : s.substr(a, b - a + 1);
  };
  return {trim(text.substr(0, eq)), trim(text.substr(eq + 1))};
}

void apply_settings(nlohmann::json& config, const std::vector<std::string>& settings) {
  std::string problems;
  for (const std::string& s : settings) {
    const auto [key, value] = split_setting(s);
    for (const auto& p : config::set_known_setting(config, key, value))
      problems += "\n  " + s + ": " + (p.key.empty() || p.key == key ? "" : p.key + ": ") + p.message;
  }
  if (!problems.empty()) throw TraceError("these settings are not valid, so nothing was written:" + problems);
}

std::string default_trial_name(const std::string& first_path, int ranks) {
  std::string name = file_name(first_path);
  for (const char* suffix : {".gz", ".json", ".pt.trace"})
    if (name.size() > std::string(suffix).size() &&
        name.compare(name.size() - std::strlen(suffix), std::strlen(suffix), suffix) == 0)
      name.resize(name.size() - std::strlen(suffix));
  return name + " (imported trace, " + std::to_string(ranks) + (ranks == 1 ? " rank)" : " ranks)");
}

TraceTrial read_trace_trial(const std::vector<std::string>& paths, const TraceImportOptions& options) {
  if (paths.empty()) throw TraceError("no trace files given");
  {  // typos and bad values before minutes of reading
    nlohmann::json probe = nlohmann::json::object();
    apply_settings(probe, options.settings);
  }
  int64_t total = 0;
  for (const auto& p : paths) {
    struct stat st {};
    if (::stat(p.c_str(), &st) == 0) total += static_cast<int64_t>(st.st_size);
  }
  std::vector<RankTrace> ranks;
  int64_t done = 0;
  for (const auto& p : paths) {
    TraceStreambuf::Progress progress;
    if (options.progress) progress = [&, done](int64_t read) { return options.progress(done + read, total); };
    ranks.push_back(read_torch_trace(p, progress));
    done += ranks.back().file_bytes;
  }
  check_ranks(ranks);
  std::sort(ranks.begin(), ranks.end(), [](const RankTrace& a, const RankTrace& b) { return a.rank < b.rank; });

  TraceTrial t;
  t.world_size = ranks.front().hello.world_size;
  t.name = !options.name.empty() ? options.name
                                  : default_trial_name(ranks.front().path, static_cast<int>(ranks.size()));
  t.source =
      "import: torch.profiler " + file_name(ranks.front().path) +
      (ranks.size() > 1 ? " (+" + std::to_string(ranks.size() - 1) + " rank" + (ranks.size() > 2 ? "s)" : ")") : "");
  // Known settings: what the lowest rank's trace shows, then the user's.
  t.config = ranks.front().known;
  t.config["name"] = t.name;
  apply_settings(t.config, options.settings);

  if (static_cast<int>(ranks.size()) < t.world_size) {
    std::string missing;
    for (int r = 0, i = 0; r < t.world_size && missing.size() < 200; ++r) {
      if (i < static_cast<int>(ranks.size()) && ranks[static_cast<size_t>(i)].rank == r) {
        ++i;
        continue;
      }
      missing += (missing.empty() ? "" : ", ") + std::to_string(r);
    }
    t.warnings.push_back("only " + std::to_string(ranks.size()) + " of " + std::to_string(t.world_size) +
                         " ranks were imported (missing: " + missing + ")");
  }

  t.log.trial = "torch-trace-" + ranks.front().trace_id;
  for (RankTrace& r : ranks) {
    protocol::RankLog& rl = t.log.ranks[r.rank];
    const int64_t t0 = r.steps.front().start_us;
    r.hello.config = t.config;
    rl.hello = r.hello;
    rl.logs.push_back(
        {t0,
         {"info", "imported from torch.profiler trace " + file_name(r.path) + " (trace id " + r.trace_id + ", " +
                      std::to_string(r.events) + " events, " + std::to_string(r.gpu_activities) + " GPU activities)"}});
    for (const std::string& w : r.warnings) {
      rl.warnings.push_back({t0, {"import", w}});
      t.warnings.push_back("rank " + std::to_string(r.rank) + ": " + w);
    }
    rl.done = summary_of(r.steps);
    t.file_bytes += r.file_bytes;
    t.json_bytes += r.json_bytes;
    rl.steps = std::move(r.steps);
  }
  t.steps = t.log.steps_per_rank();
  return t;
}

}  // namespace tunebench::import

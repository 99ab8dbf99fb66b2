#include "core/analysis/pair_diagnosis.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "core/metrics/data_parallel_bounds.h"
#include "core/analysis/compare.h"
#include "core/analysis/diagnosis_text.h"
#include "core/analysis/format.h"

namespace tunebench::analysis {

namespace {

constexpr double kHeadlineMinMs = 0.05;  // parts that moved less than this are not worth a word
constexpr size_t kHeadlineParts = 3;

std::optional<FeasibilityModel> feasibility(const TrialMetrics& base, const TrialMetrics& other) {
  if (base.world_size != 1 || other.world_size < 2 || !other.comm_floor_ms || !other.busbw_gbps ||
      base.tokens_per_step <= 0 || other.tokens_per_step <= 0 || base.step_ms.n == 0)
    return std::nullopt;
  FeasibilityModel f;
  const double n = static_cast<double>(other.world_size);
  f.world_size = other.world_size;
  f.compute_ms = base.step_ms.median * (other.tokens_per_step / n) / base.tokens_per_step;
  f.floor_ms = *other.comm_floor_ms;
  f.busbw_gbps = *other.busbw_gbps;
  f.backward_ms = other.breakdown[Part::Backward];
  const metrics::DataParallelBounds bounds = metrics::data_parallel_bounds(other.world_size, f.compute_ms, f.floor_ms, f.backward_ms);
  f.exposed_min_ms = bounds.exposed_min_ms;
  f.speedup_no_overlap = bounds.speedup_no_overlap;
  f.speedup_full_overlap = bounds.speedup_full_overlap;
  if (base.tokens_per_s_total.median > 0)
    f.speedup_measured = other.tokens_per_s_total.median / base.tokens_per_s_total.median;
  f.can_beat_single = f.speedup_full_overlap > 1.0;
  f.accum_for_90pct = bounds.accum_for_90pct;

  const std::string n_devices = std::to_string(other.world_size) + " " + device_noun(other, true);
  const std::string one = "one " + device_noun(other);
  std::string s = "Communication floor " + format_ms(f.floor_ms) + " per step (" + floor_clause(other) + ") against " +
                  format_ms(f.compute_ms) + " of compute on " + one + " for one rank's tokens. ";
  s += "With nothing overlapped, " + n_devices + " give " + format_ratio(f.speedup_no_overlap) + " " + one +
       "'s throughput; hiding it behind backward (" + format_ms(f.backward_ms) + ") at best " +
       format_ratio(f.speedup_full_overlap) + "; measured " + format_ratio(f.speedup_measured);
  // The model is built from medians; the measurement has a spread. Say how wide, so a measured
  // figure above the "at best" bound reads as what it is.
  if (base.tokens_per_s_total.n > 1 && other.tokens_per_s_total.n > 1 && base.tokens_per_s_total.p75 > 0 &&
      base.tokens_per_s_total.p25 > 0) {
    const double low = other.tokens_per_s_total.p25 / base.tokens_per_s_total.p75;
    const double high = other.tokens_per_s_total.p75 / base.tokens_per_s_total.p25;
    if (format_ratio(low) != format_ratio(high))
      s += " (" + format_ratio(low) + " to " + format_ratio(high) + " between quartiles)";
  }
  s += ". ";
  if (f.speedup_measured > f.speedup_full_overlap * 1.005) {
    const double spread =
        base.step_ms.median > 0 ? (base.step_ms.p75 - base.step_ms.p25) / 2.0 / base.step_ms.median : 0;
    s += "The measurement is above the model's best case: the model takes median step times, and " + one +
         "'s step alone varies by ±" + format_pct(spread) + " (p25 to p75), so the bound is that uncertain too. ";
  }
  const std::string accum = "grad_accum " + std::to_string(f.accum_for_90pct) + " or more (x" +
                            std::to_string(f.accum_for_90pct) + " micro-steps per all-reduce)";
  const std::string keeps =
      f.accum_for_90pct > 1
          ? accum + " keeps 90 % per " + device_noun(other) + " even with nothing overlapped"
          : "no accumulation is needed to keep 90 % per " + device_noun(other) + " with nothing overlapped";
  if (!f.can_beat_single)
    s += "On this interconnect data parallelism cannot beat " + one + " at this batch: " + keeps +
         ", or use a faster link.";
  else if (f.speedup_no_overlap > 1.0)
    s += "DDP beats " + one + " here even with no overlap; " + keeps + ".";
  else
    s += "DDP beats " + one + " here only if the all-reduce overlaps backward; " + keeps + ".";
  f.statement = s;
  return f;
}

// One grad_accum suggestion per pair: the single-trial rule sizes it from the measured exposed
// time, the model from the floor with nothing overlapped. The pair suggests the larger of the two
// (it satisfies both), on the communication finding when there is one, else on the scaling one.
void unify_grad_accum(const TrialMetrics& other, const FeasibilityModel& f, std::vector<Finding>& findings) {
  if (!other.knows({"strategy", "grad_accum"}) || other.config->strategy != config::Strategy::Ddp) return;
  const config::TrialConfig& c = *other.config;
  int64_t accum = f.accum_for_90pct > 1 ? std::min<int64_t>(64, c.grad_accum * f.accum_for_90pct) : c.grad_accum;
  Finding* home = nullptr;
  for (auto& finding : findings) {
    if (finding.kind == FindingKind::CommBound && !home) home = &finding;
    for (const auto& sug : finding.suggestions)
      for (const auto& ch : sug.changes)
        if (ch.key == "grad_accum") accum = std::max<int64_t>(accum, std::atoll(ch.value.c_str()));
    auto& list = finding.suggestions;
    list.erase(std::remove_if(list.begin(), list.end(),
                              [](const Suggestion& sug) {
                                return std::any_of(sug.changes.begin(), sug.changes.end(),
                                                   [](const KnobChange& ch) { return ch.key == "grad_accum"; });
                              }),
               list.end());
  }
  if (accum <= c.grad_accum) return;
  if (!home)
    for (auto& finding : findings)
      if (finding.kind == FindingKind::Scaling) home = &finding;
  if (!home) return;
  const double step_ms = other.breakdown.step_ms > 0 ? other.breakdown.step_ms : other.step_ms.median;
  Suggestion sug = grad_accum_suggestion(c, accum, other.breakdown[Part::ExposedComm], step_ms);
  if (f.accum_for_90pct > 1) sug.why += "; pays the floor once per " + std::to_string(accum) + " micro-steps";
  home->suggestions.insert(home->suggestions.begin(), std::move(sug));
}

// The caveat of a step difference smaller than the trials' own step-to-step spread (the larger
// interquartile range of their step times): "" when the difference stands out of it.
std::string noise_caveat(const TrialMetrics& base, const TrialMetrics& other, double delta_ms) {
  if (base.step_ms.n < 2 || other.step_ms.n < 2) return "";
  const double spread = std::max(base.step_ms.iqr(), other.step_ms.iqr());
  if (std::abs(delta_ms) >= spread) return "";
  return "within noise: " + other.label + " and " + base.label + " differ by " + format_ms(std::abs(delta_ms)) +
         ", less than their step-to-step spread of " + format_ms(spread) + " (p25 to p75)";
}

// Several CPU ranks on one host share its cores: each rank's forward and backward slow down next
// to one rank alone, and that is the cost of the pair, not its communication. A finding when the
// multi-rank trial's compute per token grew beyond kCpuContentionShare of the single rank's
// (means, as the breakdown's), nullopt otherwise.
constexpr double kCpuContentionShare = 0.10;
std::optional<Finding> cpu_contention(const TrialMetrics& base, const TrialMetrics& other) {
  if (on_gpu(base) || on_gpu(other) || base.world_size != 1 || other.world_size < 2 || other.ranks_per_host < 2)
    return std::nullopt;
  if (base.tokens_per_step <= 0 || other.tokens_per_step <= 0) return std::nullopt;
  const auto compute = [](const TrialMetrics& m) {
    return m.breakdown[Part::Forward] + m.breakdown[Part::Backward];  // recompute is inside backward
  };
  // The single rank's compute for one rank's share of the multi-rank trial's tokens.
  const double alone = compute(base) * (other.tokens_per_step / other.world_size) / base.tokens_per_step;
  const double shared = compute(other);
  if (alone <= 0 || shared - alone <= kCpuContentionShare * alone) return std::nullopt;
  Finding f;
  f.kind = FindingKind::ComputeBound;
  f.impact_ms = shared - alone;
  f.share = other.breakdown.step_ms > 0 ? f.impact_ms / other.breakdown.step_ms : 0.0;
  const std::string ranks = std::to_string(other.ranks_per_host) + " ranks on one host";
  f.title = "the ranks compete for the CPU (" + ranks +
            (other.cpu_use_pct ? ", " + format_fixed(*other.cpu_use_pct / 100.0, 1) + " cores busy" : std::string()) +
            "): forward and backward take " + format_ms(shared) + " per step (mean) against " + format_ms(alone) +
            " for one rank alone, " + format_signed_ms(f.impact_ms);
  f.detail = "On the CPU the ranks share the host's cores: each rank computes slower than one rank alone, and "
             "the collectives, which run on the same cores, slow down with them. This is the cost of running " +
             std::to_string(other.world_size) + " ranks on this host, not of the communication: more ranks than "
             "cores, or ranks with as many threads as the host has cores, only divide the cores.";
  return f;
}

}  // namespace

PairDiagnosis diagnose_pair(const TrialMetrics& base, const TrialMetrics& other) {
  PairDiagnosis p;
  p.base_label = base.label;
  p.other_label = other.label;
  p.step_delta_ms = other.breakdown.step_ms - base.breakdown.step_ms;
  for (Part part : kAllParts)
    p.deltas.push_back({part, other.breakdown[part] - base.breakdown[part]});
  std::stable_sort(p.deltas.begin(), p.deltas.end(),
                   [](const PartDelta& a, const PartDelta& b) { return std::abs(a.delta_ms) > std::abs(b.delta_ms); });

  p.headline = other.label + " step " + format_signed_ms(p.step_delta_ms) + (p.step_delta_ms >= 0 ? " over " : " vs ") +
               base.label + " (mean):";
  size_t said = 0;
  for (const auto& d : p.deltas) {
    if (said == kHeadlineParts || std::abs(d.delta_ms) < kHeadlineMinMs) break;
    p.headline += said ? ", " : " ";
    if (d.part == Part::ExposedComm) {
      p.headline += "exposed " + collective_name(other) + " " + format_signed_ms(d.delta_ms);
      const std::string clause = comm_clause(other);
      if (!clause.empty()) p.headline += " (" + clause + ")";
    } else {
      p.headline += std::string(label(d.part)) + " " + format_signed_ms(d.delta_ms);
    }
    ++said;
  }
  if (said == 0) p.headline += " no part moved";
  if (const std::string caveat = noise_caveat(base, other, p.step_delta_ms); !caveat.empty())
    p.headline += "; " + caveat;

  p.throughput = throughput_statement(base, other);
  if (base.world_size == 1) p.scaling_efficiency = scaling_efficiency(other, base);
  p.feasibility = feasibility(base, other);

  p.findings = diagnose(other).findings;
  if (p.feasibility) {
    const auto& f = *p.feasibility;
    Finding s;
    s.kind = FindingKind::Scaling;
    s.title = "scaling: " + std::to_string(other.world_size) + " " + device_noun(other, true) + " give " +
              format_ratio(f.speedup_measured) + " the throughput of one (" +
              (p.scaling_efficiency ? format_pct(*p.scaling_efficiency) + " per " + device_noun(other)
                                    : "per " + device_noun(other) + " unknown") +
              "); the model says " + format_ratio(f.speedup_no_overlap) + " to " + format_ratio(f.speedup_full_overlap);
    s.detail = f.statement;
    s.impact_ms = 0.0;  // context for the findings above, not a cause of its own
    p.findings.push_back(std::move(s));
    unify_grad_accum(other, f, p.findings);
  }
  if (auto contention = cpu_contention(base, other)) {
    // The communication finding, if any, is not the cause: its collectives share the same cores.
    for (auto& f : p.findings)
      if (f.kind == FindingKind::CommBound) {
        f.detail += (f.detail.empty() ? "" : " ") +
                    std::string("The ranks compete for the CPU (see above): the exposed time is partly that competition.");
        f.impact_ms = std::min(f.impact_ms, contention->impact_ms * 0.99);
      }
    p.findings.push_back(std::move(*contention));
  }
  if (other.config) keep_valid_suggestions(p.findings, *other.config);
  rank_findings(p.findings);
  return p;
}

}  // namespace tunebench::analysis

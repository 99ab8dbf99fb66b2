#include "core/analysis/pair_diagnosis.h"

#include <algorithm>
#include <cmath>

#include "core/analysis/comm_model.h"
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
  const DataParallelBounds bounds = data_parallel_bounds(other.world_size, f.compute_ms, f.floor_ms, f.backward_ms);
  f.exposed_min_ms = bounds.exposed_min_ms;
  f.speedup_no_overlap = bounds.speedup_no_overlap;
  f.speedup_full_overlap = bounds.speedup_full_overlap;
  if (base.tokens_per_s_total.median > 0)
    f.speedup_measured = other.tokens_per_s_total.median / base.tokens_per_s_total.median;
  f.can_beat_single = f.speedup_full_overlap > 1.0;
  f.accum_for_90pct = bounds.accum_for_90pct;

  const std::string ns = std::to_string(other.world_size);
  std::string s = "Communication floor " + format_ms(f.floor_ms) + " per step (" + floor_clause(other) + ") against " +
                  format_ms(f.compute_ms) + " of single-GPU compute for one rank's tokens. ";
  s += "With nothing overlapped, " + ns + " GPUs give " + format_ratio(f.speedup_no_overlap) +
       " one GPU's throughput; hiding it behind backward (" + format_ms(f.backward_ms) + ") at best " +
       format_ratio(f.speedup_full_overlap) + "; measured " + format_ratio(f.speedup_measured) + ". ";
  if (!f.can_beat_single)
    s += "On this interconnect data parallelism cannot beat one GPU at this batch: accumulate (grad_accum x" +
         std::to_string(f.accum_for_90pct) + " keeps 90 % per GPU even with nothing overlapped) or use a faster link.";
  else if (f.speedup_no_overlap > 1.0)
    s += "DDP beats one GPU here even with no overlap; grad_accum x" + std::to_string(f.accum_for_90pct) +
         " would keep 90 % per GPU with nothing overlapped.";
  else
    s += "DDP beats one GPU here only if the all-reduce overlaps backward; grad_accum x" +
         std::to_string(f.accum_for_90pct) + " keeps 90 % per GPU even with nothing overlapped.";
  f.statement = s;
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

  p.throughput = throughput_statement(base, other);
  if (base.world_size == 1) p.scaling_efficiency = scaling_efficiency(other, base);
  p.feasibility = feasibility(base, other);

  p.findings = diagnose(other).findings;
  if (p.feasibility) {
    const auto& f = *p.feasibility;
    Finding s;
    s.kind = FindingKind::Scaling;
    s.title = "scaling: " + std::to_string(other.world_size) + " GPUs give " + format_ratio(f.speedup_measured) +
              " the throughput of one (" +
              (p.scaling_efficiency ? format_pct(*p.scaling_efficiency) + " per GPU" : std::string("per GPU unknown")) +
              "); the model says " + format_ratio(f.speedup_no_overlap) + " to " + format_ratio(f.speedup_full_overlap);
    s.detail = f.statement;
    s.impact_ms = 0.0;  // context for the findings above, not a cause of its own
    if (other.knows({"strategy", "grad_accum"}) && other.config->strategy == config::Strategy::Ddp &&
        f.accum_for_90pct > 1) {
      const int64_t accum = std::min<int64_t>(64, other.config->grad_accum * f.accum_for_90pct);
      s.suggestions.push_back({"grad_accum " + std::to_string(accum),
                               {{"grad_accum", std::to_string(accum)}},
                               "pays the floor once per " + std::to_string(accum) + " micro-steps"});
    }
    p.findings.push_back(std::move(s));
  }
  rank_findings(p.findings);
  return p;
}

}  // namespace tunebench::analysis

#include "core/predict/memory_explain.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <stdexcept>

#include "core/metrics/memory_categories.h"

namespace tunebench::predict {
namespace {

// predict_memory's term names (memory_model.cpp) -> the measured category, by where the worker's
// rule puts the blocks that hold them (metrics/memory_categories.h): known tensors by what they
// are; anything else the forward allocated is an activation (its temporaries and autocast's weight
// casts too, while the forward runs), anything else the backward or optimizer allocated a
// temporary, and what an earlier step allocated that is no known tensor unattributed.
const std::map<std::string, std::string>& term_categories() {
  static const std::map<std::string, std::string> table = {
      {"parameters", "parameters"},
      {"FSDP gathered units", "parameters"},
      {"weights for the next forward, 16-bit or float8 (written by AdamW)", "unattributed"},
      {"CUDA graph static inputs", "unattributed"},
      {"optimizer state (AdamW exp_avg, exp_avg_sq)", "optimizer state"},
      {"gradients", "gradients"},
      {"gradients (DDP buckets, held all step)", "gradients"},
      {"gradients (kept at fixed addresses for the CUDA graph)", "gradients"},
      {"FSDP unit gradient buffers", "gradients"},
      {"FSDP gradient shards (accumulated)", "gradients"},
      {"tied embedding gradient from the head (waiting for the lookup's)", "gradients"},
      {"compressed DDP buckets", "communication"},
      {"FSDP reduce-scattered gradient shards", "communication"},
      {"activations saved for backward", "activations"},
      {"checkpointed block inputs", "activations"},
      {"final norm and loss (saved)", "activations"},
      {"weight copies in the compute dtype (float8 for the blocks under amp fp8)", "activations"},
      {"weight copies of the block (no_grad)", "activations"},
      {"checkpointed forward (no_grad) live set", "activations"},
      {"forward temporaries", "activations"},
      {"logits while the loss runs", "activations"},
      {"recomputed block activations", "temporaries"},
      {"gradient temporaries", "temporaries"},
      {"FSDP reduce-scatter input", "temporaries"},
      {"tied embedding gradient of the lookup (summed with the head's)", "temporaries"},
      {"optimizer temporaries (foreach AdamW denominators)", "temporaries"},
  };
  return table;
}

std::string gib(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f GiB", bytes / (1024.0 * 1024.0 * 1024.0));
  return buf;
}

// The knobs that shrink `category`, each as a changed configuration, when it applies.
// The micro-batch halved, the accumulation doubled: the same tokens per step.
config::TrialConfig halved_micro_batch(config::TrialConfig c) {
  c.micro_batch /= 2;
  c.grad_accum *= 2;
  return c;
}

std::string micro_batch_change(const config::TrialConfig& from, const config::TrialConfig& to) {
  return "micro_batch " + std::to_string(from.micro_batch) + " -> " + std::to_string(to.micro_batch) +
         " with grad_accum " + std::to_string(from.grad_accum) + " -> " + std::to_string(to.grad_accum) +
         " (the same tokens per step)";
}

std::vector<std::pair<MemoryFix, config::TrialConfig>> candidate_fixes(const std::string& category,
                                                                        const config::TrialConfig& c) {
  std::vector<std::pair<MemoryFix, config::TrialConfig>> out;
  auto add = [&](const char* knob, const std::string& change, config::TrialConfig changed) {
    if (config::validate(changed).empty()) out.push_back({MemoryFix{knob, change, 0, 0, false}, std::move(changed)});
  };
  const bool activations = category == "activations" || category == "temporaries" || category == "unattributed";
  if (activations && !c.checkpointing) {
    auto x = c;
    x.checkpointing = true;
    add("checkpointing", "checkpointing on (each block's activations recomputed in the backward)", x);
  }
  if (activations && c.micro_batch > 1) add("micro_batch", micro_batch_change(c, halved_micro_batch(c)), halved_micro_batch(c));
  const bool state = category == "parameters" || category == "gradients" || category == "optimizer state";
  if (state && c.world_size > 1 && c.strategy != config::Strategy::Fsdp) {
    auto x = c;
    x.strategy = config::Strategy::Fsdp;
    add("strategy", "FSDP (parameters, gradients and optimizer state sharded over " + std::to_string(c.world_size) +
                        " ranks)", x);
  }
  if (category == "gradients" && c.grad_dtype == config::DType::Fp32) {
    auto x = c;
    x.grad_dtype = config::DType::Bf16;
    add("grad_dtype", "grad_dtype bf16 (the blocks' weight gradients in 16 bits)", x);
  }
  if (category == "optimizer state" && c.optimizer == config::Optimizer::AdamW) {
    auto x = c;
    x.optimizer = config::Optimizer::Sgd;
    add("optimizer", "SGD, which keeps no moments (this changes the training, not only its memory)", x);
  }
  if (category == "communication" && c.strategy == config::Strategy::Ddp && c.bucket_mb > 5) {
    auto x = c;
    x.bucket_mb = c.bucket_mb / 4;
    char b[64];
    std::snprintf(b, sizeof b, "bucket_mb %.0f -> %.1f", c.bucket_mb, x.bucket_mb);
    add("bucket_mb", b, x);
  }
  return out;
}

}  // namespace

std::optional<std::string> category_of_term(const std::string& term_name) {
  const auto& t = term_categories();
  const auto it = t.find(term_name);
  if (it == t.end()) return std::nullopt;
  return it->second;
}

MemoryComparison compare_memory(const protocol::MemoryCategories& measured, const MemoryPrediction& predicted,
                                bool at_peak) {
  MemoryComparison m;
  m.measured_total_bytes = measured.allocated_bytes();
  m.predicted_peak_bytes = predicted.peak_bytes;
  m.predicted_peak_at = predicted.peak_at;
  const std::vector<MemoryTerm>* terms = &predicted.at_peak;
  m.predicted_at = predicted.peak_at;
  if (!at_peak && measured.phase == "forward" && !predicted.at_forward_end.empty()) {
    terms = &predicted.at_forward_end;
    m.predicted_at = "end of forward";
  } else if (!at_peak && measured.phase == "backward" && !predicted.at_backward_end.empty()) {
    terms = &predicted.at_backward_end;
    m.predicted_at = "end of backward";
  }
  for (const auto& [name, bytes] : metrics::category_bytes(measured)) m.rows.push_back({name, bytes, 0, {}});
  for (const auto& term : *terms) {
    const auto category = category_of_term(term.name);
    if (!category) {
      m.unknown_terms.push_back(term.name);
      continue;
    }
    for (auto& row : m.rows)
      if (row.category == *category) {
        row.predicted_bytes += static_cast<int64_t>(term.bytes);
        row.terms.push_back(term.name);
      }
  }
  return m;
}

std::string memory_line(const MemoryComparison& m, const std::string& phase, int64_t step, int64_t reserved_free_bytes) {
  std::string s = "memory at the " + phase + " of step " + std::to_string(step) + ":";
  const char* sep = " ";
  for (const auto& row : m.rows) {
    if (row.measured_bytes == 0 && row.predicted_bytes == 0) continue;
    s += sep + row.category + " " + gib(static_cast<double>(row.measured_bytes)) + " (predicted " +
         gib(static_cast<double>(row.predicted_bytes)) + ")";
    sep = ", ";
  }
  return s + "; reserved, held by no tensor " + gib(static_cast<double>(reserved_free_bytes));
}

std::optional<OomExplanation> explain_oom(const config::TrialConfig& config, const nlohmann::json& details,
                                          int64_t device_memory_bytes, const MemoryOptions& options) {
  if (!details.is_object() || !details.contains("memory_categories")) return std::nullopt;
  const protocol::MemoryCategories measured = protocol::memory_categories_from_json(details.at("memory_categories"));
  OomExplanation e;
  e.phase = measured.phase;
  if (const auto it = details.find("oom_step"); it != details.end() && it->is_number_integer()) e.step = it->get<int64_t>();
  if (const auto it = details.find("requested_bytes"); it != details.end() && it->is_number_integer())
    e.requested_bytes = std::max<int64_t>(0, it->get<int64_t>());
  MemoryOptions o = options;
  if (device_memory_bytes > 0) o.device_memory_bytes = device_memory_bytes;
  const MemoryPrediction predicted = predict_memory(config, o);
  e.comparison = compare_memory(measured, predicted, /*at_peak=*/true);

  // A category grew past the prediction when it holds materially more than it allowed: a few
  // MiB over (allocator rounding, small buffers) is not what ran the device out of memory.
  constexpr int64_t kMaterialExcess = int64_t{256} << 20;
  const CategoryComparison* worst = nullptr;
  for (const auto& row : e.comparison.rows)
    if (row.measured_bytes - row.predicted_bytes >= kMaterialExcess &&
        (!worst || row.measured_bytes - row.predicted_bytes > worst->measured_bytes - worst->predicted_bytes))
      worst = &row;
  // The largest measured category: what was growing when no category grew past the prediction.
  const CategoryComparison* largest = nullptr;
  for (const auto& row : e.comparison.rows)
    if (!largest || row.measured_bytes > largest->measured_bytes) largest = &row;
  std::string text;
  if (worst) {
    e.category = worst->category;
    e.measured_bytes = worst->measured_bytes;
    e.predicted_bytes = worst->predicted_bytes;
    e.excess_bytes = worst->measured_bytes - worst->predicted_bytes;
    text = "Out of memory in the " + e.phase + (e.step >= 0 ? " of step " + std::to_string(e.step) : "") + ": " +
           e.category + " held " + gib(e.measured_bytes) + " where the prediction allowed " + gib(e.predicted_bytes) +
           " at its peak (" + predicted.peak_at + "), " + gib(e.excess_bytes) + " more";
    if (e.requested_bytes > 0) text += ", and " + gib(e.requested_bytes) + " more was asked for";
    text += ".";
  } else {
    text = "Out of memory in the " + e.phase + (e.step >= 0 ? " of step " + std::to_string(e.step) : "") +
           ": no category held 0.25 GiB or more beyond what the prediction allowed";
    if (largest && largest->measured_bytes > 0)
      text += " (" + largest->category + " had reached " + gib(largest->measured_bytes) + " of the " +
              gib(largest->predicted_bytes) + " predicted at the peak)";
    if (device_memory_bytes > 0 && predicted.device_needed_bytes <= device_memory_bytes)
      text += "; the prediction fits the device (" + gib(static_cast<double>(predicted.device_needed_bytes)) +
              " of " + gib(static_cast<double>(device_memory_bytes)) +
              "): the rest went to what no category counts (blocks reserved but free, another process on the "
              "device, the CUDA context).";
    else
      text += "; the prediction itself needs " + gib(static_cast<double>(predicted.device_needed_bytes)) +
              (device_memory_bytes > 0 ? " of the device's " + gib(static_cast<double>(device_memory_bytes)) : "") +
              ".";
  }
  // The fixes for the category that grew (or, when none did, for the largest measured one).
  std::string target = e.category;
  if (target.empty() && largest) target = largest->category;
  for (auto& [fix, changed] : candidate_fixes(target, config)) {
    MemoryPrediction p = predict_memory(changed, o);
    // The micro-batch is halved again while it stays even (the same tokens per step) until the
    // prediction fits the device; when none of those fits, the first halving is what is said.
    if (fix.knob == "micro_batch" && device_memory_bytes > 0 && fit_of(p, device_memory_bytes) != Fit::Fits) {
      config::TrialConfig smaller = changed;
      MemoryPrediction q = p;
      while (smaller.micro_batch % 2 == 0 && fit_of(q, device_memory_bytes) != Fit::Fits) {
        config::TrialConfig next = halved_micro_batch(smaller);
        if (!config::validate(next).empty()) break;
        smaller = std::move(next);
        q = predict_memory(smaller, o);
      }
      if (fit_of(q, device_memory_bytes) == Fit::Fits) {
        changed = std::move(smaller);
        p = std::move(q);
        fix.change = micro_batch_change(config, changed);
      }
    }
    fix.predicted_peak_bytes = p.peak_bytes;
    fix.predicted_device_needed_bytes = p.device_needed_bytes;
    fix.fits = device_memory_bytes > 0 && fit_of(p, device_memory_bytes) == Fit::Fits;
    e.fixes.push_back(fix);
  }
  std::stable_sort(e.fixes.begin(), e.fixes.end(), [](const MemoryFix& a, const MemoryFix& b) {
    if (a.fits != b.fits) return a.fits;
    return a.predicted_device_needed_bytes < b.predicted_device_needed_bytes;
  });
  if (e.fixes.empty()) {
    text += " No knob of this trial shrinks " + target + ".";
  } else {
    const MemoryFix& f = e.fixes.front();
    text += " Fix: " + f.change + ", predicted to need " + gib(static_cast<double>(f.predicted_device_needed_bytes)) +
            " (peak " + gib(static_cast<double>(f.predicted_peak_bytes)) + ")" +
            (device_memory_bytes > 0 ? (f.fits ? ", which fits." : ", which still does not fit.") : ".");
  }
  e.text = text;
  return e;
}

}  // namespace tunebench::predict

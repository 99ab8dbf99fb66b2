// The step simulation behind predict_memory(). Each `Live` entry is a named category of tensors;
// `candidate()` records the live total plus what exists only at that moment, and the largest one
// is the peak.
#include "core/predict/memory_model.h"

#include <algorithm>
#include <map>

#include "core/predict/model_shape.h"
#include "core/predict/precision.h"
#include "core/rules/optimizer_rules.h"

namespace tunebench::predict {

namespace {

using config::Strategy;

class Live {
 public:
  void add(const std::string& name, double bytes) { m_bytes[name] += bytes; }
  void sub(const std::string& name, double bytes) {
    auto it = m_bytes.find(name);
    if (it == m_bytes.end()) return;
    it->second = std::max(0.0, it->second - bytes);
  }
  double total() const {
    double t = 0;
    for (const auto& [name, b] : m_bytes) t += b;
    return t;
  }
  const std::map<std::string, double>& bytes() const { return m_bytes; }

 private:
  std::map<std::string, double> m_bytes;
};

void largest_first(std::vector<MemoryTerm>& terms) {
  std::sort(terms.begin(), terms.end(), [](const MemoryTerm& a, const MemoryTerm& b) { return a.bytes > b.bytes; });
}

// Names of the categories, used in at_peak.
constexpr const char* kParams = "parameters";
constexpr const char* kOptState = "optimizer state (AdamW exp_avg, exp_avg_sq)";
constexpr const char* kGrads = "gradients";
constexpr const char* kBuckets = "gradients (DDP buckets, held all step)";
constexpr const char* kCompressed = "compressed DDP buckets";
constexpr const char* kGraphGrads = "gradients (kept at fixed addresses for the CUDA graph)";
constexpr const char* kGraphInput = "CUDA graph static inputs";
constexpr const char* kCasts = "weight copies in the compute dtype (float8 for the blocks under amp fp8)";
constexpr const char* kActs = "activations saved for backward";
constexpr const char* kCkpt = "checkpointed block inputs";
constexpr const char* kRecompute = "recomputed block activations";
constexpr const char* kHead = "final norm and loss (saved)";
constexpr const char* kGathered = "FSDP gathered units";
constexpr const char* kGradFull = "FSDP unit gradient buffers";
constexpr const char* kReduced = "FSDP reduce-scattered gradient shards";
constexpr const char* kShardGrads = "FSDP gradient shards (accumulated)";
constexpr const char* kNextCopies = "weights for the next forward, 16-bit or float8 (written by AdamW)";
constexpr const char* kTiedGrad = "tied embedding gradient from the head (waiting for the lookup's)";

struct Simulation {
  const config::TrialConfig& c;
  Precision p;
  ExecutionMode mode;
  std::vector<UnitShape> units;
  BlockActivations block;
  HeadActivations head;
  int n = 1;
  double tokens = 0;
  bool fsdp = false, ddp = false, single = false;
  bool full_shard = false;
  bool weight_copies = false;  // AdamW writes the next forward's 16-bit weights
  bool half_grads = false;     // half_weight_grads: the blocks' matmul weights' gradients in bf16

  Live live;
  std::vector<bool> gathered;
  std::vector<double> cast_of;  // weight copy currently held per unit

  double best = -1;
  std::string best_at;
  std::vector<MemoryTerm> best_terms;

  Simulation(const config::TrialConfig& config, bool cuda)
      : c(config), p(precision_of(config)), mode(execution_mode(config, cuda)), units(llama_units(config.dims)) {
    block = block_activations(c.dims, c.seq_len, p, mode);
    head = head_activations(c.dims, p, mode, static_cast<double>(config.micro_batch) * config.seq_len);
    fsdp = c.strategy == Strategy::Fsdp;
    ddp = c.strategy == Strategy::Ddp;
    single = c.strategy == Strategy::Single;
    n = fsdp ? std::max(1, c.world_size) : 1;
    full_shard = c.fsdp_mode == config::FsdpMode::FullShard;
    tokens = static_cast<double>(c.micro_batch) * static_cast<double>(c.seq_len);
    gathered.assign(units.size(), false);
    cast_of.assign(units.size(), 0.0);
  }

  bool is_block(size_t u) const { return u > 0 && u + 1 < units.size(); }
  // Bytes per element of the weights' gradients as autograd produces them (the parameter dtype).
  double weight_bytes() const { return fsdp ? p.gathered_bytes : p.param_bytes; }
  bool is_head(size_t u) const { return u + 1 == units.size(); }
  double shard_numel(size_t u) const {
    const double numel = static_cast<double>(units[u].numel());
    return fsdp ? static_cast<double>((units[u].numel() + n - 1) / n) : numel;
  }
  double full_numel(size_t u) const { return fsdp ? shard_numel(u) * n : static_cast<double>(units[u].numel()); }
  // One unit's gradients on a rank that holds them whole: the parameter dtype, or under
  // half_weight_grads the blocks' matmul weights in the compute dtype.
  double grad_bytes(size_t u) const {
    const double numel = static_cast<double>(units[u].numel());
    if (!half_grads || !is_block(u)) return numel * p.param_bytes;
    const double mm = static_cast<double>(units[u].matmul_numel());
    return (numel - mm) * p.param_bytes + mm * p.compute_bytes;
  }
  double all_grad_bytes() const {
    double s = 0;
    for (size_t u = 0; u < units.size(); ++u) s += grad_bytes(u);
    return s;
  }
  double all_numel() const {
    double s = 0;
    for (size_t u = 0; u < units.size(); ++u) s += static_cast<double>(units[u].numel());
    return s;
  }
  double all_shards() const {
    double s = 0;
    for (size_t u = 0; u < units.size(); ++u) s += shard_numel(u);
    return s;
  }

  void candidate(const std::string& where, const std::vector<MemoryTerm>& extra = {}) {
    double total = live.total();
    for (const auto& e : extra) total += e.bytes;
    if (total <= best) return;
    best = total;
    best_at = where;
    best_terms.clear();
    for (const auto& [name, b] : live.bytes())
      if (b > 0) best_terms.push_back({name, b, ""});
    for (const auto& e : extra)
      if (e.bytes > 0) best_terms.push_back(e);
  }

  void gather(size_t u) {
    if (!fsdp || gathered[u]) return;
    live.add(kGathered, full_numel(u) * p.gathered_bytes);
    gathered[u] = true;
  }
  void release(size_t u) {
    if (!fsdp || !gathered[u]) return;
    live.sub(kGathered, full_numel(u) * p.gathered_bytes);
    gathered[u] = false;
  }
  // The copy of a unit's matmul weights its forward makes (autocast, or the fused ops): in the
  // compute dtype, or as float8 transposes for the blocks under amp fp8.
  double copy_bytes(size_t u) const {
    const double per = p.fp8 && is_block(u) ? 1.0 : p.weight_copy_bytes;
    return matmul_numel_used(u) * per;
  }
  // The matmul weights a unit's forward reads: a tied embedding matrix is read by the head.
  double matmul_numel_used(size_t u) const {
    if (!c.dims.tie_embeddings) return static_cast<double>(units[u].matmul_numel());
    if (u == 0) return 0.0;
    if (is_head(u)) return static_cast<double>(units[0].matmul_numel()) + static_cast<double>(units[u].matmul_numel());
    return static_cast<double>(units[u].matmul_numel());
  }
  // The live set now, as a step after the first holds it: under weight_copies a forward reads
  // AdamW's copies, written by the step before, where step 0 casts, and holds them as long as it
  // would hold its casts: a unit's copies are live while its cast is (cast_of), the tied table's
  // with the head that reads it. So the fused loss's table copy is gone at the forward's end, and
  // every copy of the step before is gone at the backward's end.
  std::vector<MemoryTerm> steady_terms() const {
    std::map<std::string, double> bytes = live.bytes();
    if (weight_copies) {
      bytes.erase(kCasts);
      double held = 0;
      for (size_t u = 0; u < units.size(); ++u) {
        if (cast_of[u] <= 0) continue;
        held += next_copy_bytes(u);
        if (is_head(u) && c.dims.tie_embeddings) held += next_copy_bytes(0);
      }
      if (held > 0) bytes[kNextCopies] += held;
    }
    std::vector<MemoryTerm> out;
    for (const auto& [name, b] : bytes)
      if (b > 0) out.push_back({name, b, ""});
    largest_first(out);
    return out;
  }

  void cast(size_t u) {
    if (cast_of[u] > 0) return;
    cast_of[u] = copy_bytes(u);
    live.add(kCasts, cast_of[u]);
  }
  void uncast(size_t u) {
    live.sub(kCasts, cast_of[u]);
    cast_of[u] = 0;
  }

  // ---- the step ------------------------------------------------------------------------------

  void resident() {
    const double params = fsdp ? all_shards() * p.param_bytes : all_numel() * p.param_bytes;
    live.add(kParams, params);
    if (c.optimizer == config::Optimizer::AdamW) live.add(kOptState, 2 * params);
    if (ddp) {
      live.add(kBuckets, all_numel() * p.param_bytes);
      if (c.compression != config::Compression::None) live.add(kCompressed, all_numel() * 2);
    }
    if (single && mode.cuda_graph) {
      live.add(kGraphGrads, all_numel() * p.param_bytes);
      live.add(kGraphInput, static_cast<double>(c.grad_accum * c.micro_batch * (c.seq_len + 1)) * 8);
    }
  }

  void forward(int64_t micro) {
    const std::string suffix = c.grad_accum > 1 ? " (micro-step " + std::to_string(micro + 1) + ")" : "";
    for (size_t u = 0; u < units.size(); ++u) {
      gather(u);
      if (c.fsdp_prefetch && u + 1 < units.size()) gather(u + 1);
      // Autocast caches its copies until the forward ends; the fused ops' copies live only while
      // something saved them for backward (not in a checkpointed block's no_grad forward).
      const bool nograd_block = is_block(u) && c.checkpointing;
      if (p.autocast || !nograd_block) cast(u);
      if (is_block(u)) {
        if (c.checkpointing) {
          candidate("forward of " + units[u].name + suffix,
                    {{"checkpointed forward (no_grad) live set", block.nograd_forward_peak_per_token * tokens, ""},
                     {"weight copies of the block (no_grad)", p.autocast ? 0.0 : copy_bytes(u), ""}});
          live.add(kCkpt, block.checkpoint_bytes_per_token * tokens);
        } else {
          live.add(kActs, block.saved_bytes_per_token() * tokens);
          candidate("forward of " + units[u].name + suffix,
                    {{"forward temporaries", block.forward_transient_per_token * tokens, ""}});
        }
      } else if (is_head(u)) {
        live.add(kHead, head.saved_bytes_per_token() * tokens + head.saved_fixed_bytes);
        candidate("loss, end of forward" + suffix,
                  {{"logits while the loss runs",
                    head.forward_transient_per_token * tokens + head.forward_transient_fixed_bytes, ""}});
        // The fused loss computed the head's gradients already and kept no weight: its copy goes.
        if (mode.kernels == KernelMode::Fused) uncast(u);
      }
      if (full_shard && u + 1 < units.size()) release(u);  // ZeRO-3 frees all but the head after forward
    }
    // Leaving autocast clears its cache: under checkpointing nothing else holds the blocks'
    // copies; otherwise the linear layers saved them for backward (and the fused ops' copies were
    // only made where saved).
    if (c.checkpointing)
      for (size_t u = 0; u < units.size(); ++u)
        if (is_block(u)) uncast(u);
  }

  void backward(int64_t micro) {
    const std::string suffix = c.grad_accum > 1 ? " (micro-step " + std::to_string(micro + 1) + ")" : "";
    const bool first = micro == 0;
    const bool last = micro + 1 == std::max<int64_t>(1, c.grad_accum);
    for (size_t k = units.size(); k-- > 0;) {
      const size_t u = k;
      std::vector<MemoryTerm> extra;
      if (fsdp) {
        gather(u);
        if (c.fsdp_prefetch && u > 0) gather(u - 1);
        live.add(kGradFull, full_numel(u) * p.gathered_bytes);
      }
      double act_transient = 0;
      if (is_head(u)) {
        act_transient = head.backward_transient_per_token * tokens;
      } else if (is_block(u)) {
        if (c.checkpointing) {
          live.add(kRecompute, block.saved_bytes_per_token() * tokens);
          cast(u);  // the recompute casts the weights again
        }
        act_transient = block.backward_transient_per_token * tokens;
      }
      // A weight gradient is produced in the compute dtype and cast to the parameter's dtype; when
      // a gradient already exists (DDP buckets, accumulation, CUDA graphs) it is then added in place.
      const double largest = static_cast<double>(units[u].largest_param_numel());
      double weight_transient = p.autocast ? largest * p.compute_bytes : 0.0;
      const bool accumulates = ddp || (single && (mode.cuda_graph || !first));
      if (accumulates || fsdp) weight_transient += largest * (fsdp ? p.gathered_bytes : p.param_bytes);
      extra.push_back({"gradient temporaries", std::max(act_transient, weight_transient), ""});
      // The tied matrix's gradient: the lookup's is summed in place into the head's waiting one,
      // which then becomes the gradient (two copies at most, not three).
      const bool tied_lookup = c.dims.tie_embeddings && u == 0;
      const bool new_grads = single && first && !mode.cuda_graph;
      if (new_grads && !tied_lookup) live.add(kGrads, grad_bytes(u));
      if (fsdp) {
        // on_grad_ready: the unit's gradients, converted to the reduce dtype, are reduce-scattered
        // into a shard kept until the end of backward.
        if (p.reduce_bytes != p.gathered_bytes)
          extra.push_back({"FSDP reduce-scatter input", full_numel(u) * p.reduce_bytes, ""});
        live.add(kReduced, shard_numel(u) * p.reduce_bytes);
      }
      // Tied embeddings: the head's gradient of the shared matrix waits in autograd's buffer until
      // the lookup's arrives at the end of backward, and the two are summed into one.
      if (c.dims.tie_embeddings && is_head(u))
        live.add(kTiedGrad, static_cast<double>(units[0].numel()) * weight_bytes());
      if (c.dims.tie_embeddings && u == 0) {
        extra.push_back({"tied embedding gradient of the lookup (summed with the head's)",
                         static_cast<double>(c.lookup_gradient_rows() * c.dims.dim) * weight_bytes(), ""});
      }
      candidate("backward of " + units[u].name + suffix, extra);
      if (tied_lookup) {
        live.sub(kTiedGrad, static_cast<double>(units[0].numel()) * weight_bytes());
        if (new_grads) live.add(kGrads, grad_bytes(0));
      }
      // The unit's backward is done: its saved tensors, copies and buffers go.
      if (is_head(u)) live.sub(kHead, head.saved_bytes_per_token() * tokens + head.saved_fixed_bytes);
      if (is_block(u)) {
        if (c.checkpointing) {
          live.sub(kRecompute, block.saved_bytes_per_token() * tokens);
          live.sub(kCkpt, block.checkpoint_bytes_per_token * tokens);
        } else {
          live.sub(kActs, block.saved_bytes_per_token() * tokens);
        }
      }
      uncast(u);
      if (fsdp) {
        live.sub(kGradFull, full_numel(u) * p.gathered_bytes);
        release(u);
      }
      // optimizer_overlap: the unit's update runs now, as in optimizer() below, unit by unit.
      if (c.optimizer_overlap && last) update(u);
    }
    if (fsdp) {
      // after_backward: the reduced shards become (or are added to) the optimizer's gradients.
      const double shards = all_shards();
      live.sub(kReduced, shards * p.reduce_bytes);
      if (first) live.add(kShardGrads, shards * p.param_bytes);
      for (size_t u = 0; u < units.size(); ++u) release(u);
    }
  }

  // The copies AdamW writes for unit u's next forward. (The embedding's only when it is the tied
  // head: the lookup reads the fp32 table.) Under amp fp8 a block's copies are its matmul weights in
  // float8, both layouts (2 bytes).
  double next_copy_bytes(size_t u) const {
    if (u == 0 && !c.dims.tie_embeddings) return 0;
    return p.fp8 && is_block(u) ? static_cast<double>(units[u].matmul_numel()) * 2
                                : static_cast<double>(units[u].numel()) * p.compute_bytes;
  }

  // One unit's update when its gradients go with it: its 16-bit copies are allocated, the kernel
  // updates it, its gradients go (the serial step with weight copies, and optimizer_overlap).
  void update(size_t u) {
    if (weight_copies) live.add(kNextCopies, next_copy_bytes(u));
    candidate("optimizer step (" + units[u].name + ")");
    live.sub(kGrads, grad_bytes(u));
  }

  void optimizer(bool fused_adamw) {
    std::vector<MemoryTerm> extra;
    if (c.optimizer_overlap) {  // every unit was updated in the backward
      candidate("optimizer step");
      return;
    }
    if (weight_copies) {
      candidate("optimizer step");
      for (size_t u = 0; u < units.size(); ++u) update(u);
      return;
    }
    const double params = fsdp ? all_shards() * p.param_bytes : all_numel() * p.param_bytes;
    // The foreach AdamW builds sqrt(exp_avg_sq) as a new list; the fused kernel needs nothing.
    if (c.optimizer == config::Optimizer::AdamW && !fused_adamw)
      extra.push_back({"optimizer temporaries (foreach AdamW denominators)", params, ""});
    candidate("optimizer step", extra);
    live.sub(kGrads, all_grad_bytes());
    live.sub(kShardGrads, all_shards() * p.param_bytes);
  }
};

}  // namespace

namespace {

MemoryPrediction simulate(const config::TrialConfig& c, const MemoryOptions& options, bool weight_copies) {
  const hardware::Catalogue& cat = options.catalogue ? *options.catalogue : hardware::catalogue();
  Simulation sim(c, options.cuda);
  sim.weight_copies = weight_copies;
  sim.half_grads = rules::half_weight_grads(c, options.cuda);
  sim.resident();
  MemoryPrediction out;
  out.weight_copies = weight_copies;
  out.resident_bytes = static_cast<int64_t>(sim.live.total());
  const bool fused = options.fused_adamw && options.cuda && c.fused_optimizer;
  const int64_t micro_steps = std::max<int64_t>(1, c.grad_accum);
  for (int64_t micro = 0; micro < micro_steps; ++micro) {
    sim.forward(micro);
    if (micro + 1 == micro_steps) out.at_forward_end = sim.steady_terms();
    sim.backward(micro);
    if (micro + 1 == micro_steps) out.at_backward_end = sim.steady_terms();
  }
  sim.optimizer(fused);
  out.peak_bytes = static_cast<int64_t>(sim.best);
  out.peak_at = sim.best_at;
  out.at_peak = sim.best_terms;
  largest_first(out.at_peak);
  out.block = sim.block;
  out.head = sim.head;

  // What the device must hold beyond the allocator's peak.
  const auto constant = [&](const char* name, const char* label) {
    const auto it = cat.constants.find(name);
    return MemoryTerm{label, it == cat.constants.end() ? 0.0 : it->second.value,
                      it == cat.constants.end() ? "missing from the catalogue" : it->second.source};
  };
  if (options.cuda) {
    out.overheads.push_back(constant("cuda_context_bytes", "CUDA context and libraries"));
    if (c.world_size > 1) out.overheads.push_back(constant("nccl_buffer_bytes", "NCCL buffers"));
    MemoryTerm slack = constant("allocator_slack_fraction", "caching allocator slack");
    slack.bytes *= static_cast<double>(out.peak_bytes);
    out.overheads.push_back(slack);
  }
  // The engine builds the whole model on every rank before a strategy shards it (the worker's
  // peak counter is reset after that, so only the device's capacity sees it).
  out.construction_bytes = static_cast<int64_t>(sim.all_numel() * sim.p.param_bytes);
  double needed = static_cast<double>(std::max(out.peak_bytes, out.construction_bytes));
  for (const auto& o : out.overheads) needed += o.bytes;
  out.device_needed_bytes = static_cast<int64_t>(needed);
  return out;
}

}  // namespace

bool optimizer_weight_copies(const config::TrialConfig& c, const MemoryOptions& options) {
  if (!rules::optimizer_weight_copies_apply(c, options.cuda) || !options.fused_adamw) return false;
  if (options.device_memory_bytes <= 0) return true;
  // The rule the worker follows with what it measures after step 0, here with predicted figures:
  // the device's memory left over by the step without copies against what they add at most.
  const Simulation shape(c, options.cuda);
  double largest = 0, all = 0;
  for (size_t u = 0; u < shape.units.size(); ++u) {
    largest = std::max(largest, shape.next_copy_bytes(u));
    all += shape.next_copy_bytes(u);
  }
  const int64_t added =
      rules::weight_copies_added_bytes(c, static_cast<int64_t>(largest), static_cast<int64_t>(all));
  return rules::weight_copies_fit(added, options.device_memory_bytes - simulate(c, options, false).device_needed_bytes);
}

MemoryPrediction predict_memory(const config::TrialConfig& c, const MemoryOptions& options) {
  return simulate(c, options, optimizer_weight_copies(c, options));
}

Fit fit_of(const MemoryPrediction& m, int64_t memory) {
  if (memory <= 0) return Fit::Fits;
  if (m.device_needed_bytes <= memory) return Fit::Fits;
  double without_slack = static_cast<double>(std::max(m.peak_bytes, m.construction_bytes));
  for (const auto& o : m.overheads)
    if (o.name != "caching allocator slack") without_slack += o.bytes;
  return without_slack <= static_cast<double>(memory) ? Fit::Tight : Fit::DoesNotFit;
}

const char* to_string(Fit fit) {
  switch (fit) {
    case Fit::Fits:
      return "fits";
    case Fit::Tight:
      return "tight";
    default:
      return "does not fit";
  }
}

}  // namespace tunebench::predict

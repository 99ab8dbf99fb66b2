#include "core/engine/trainer.h"

#include <algorithm>
#include <cstdio>

#include <ATen/Context.h>
#include <torch/csrc/autograd/autograd.h>

#include "core/engine/attention_choice.h"
#include "core/engine/compat.h"
#include "core/engine/data/data_pipeline.h"
#include "core/engine/errors.h"
#include "core/engine/kernels/fp8_linear.h"
#include "core/engine/kernels/fused_ops.h"
#include "core/engine/kernels/gemm_search.h"
#include "core/engine/memory_sampler.h"
#include "core/engine/model/checkpoint.h"
#include "core/engine/model/llama.h"
#include "core/engine/optim/optimizer.h"
#include "core/engine/optim/optimizer_overlap.h"
#include "core/engine/stats.h"
#include "core/engine/strategy/factory.h"
#include "core/engine/strategy/strategy.h"
#include "core/engine/timing/kernel_sampler.h"
#include "core/engine/timing/timeline.h"
#include "core/rules/optimizer_rules.h"

namespace tunebench::engine {

using config::Amp;
using protocol::Phase;

namespace {

bool fsdp_half(const config::TrialConfig& c) {
  return c.strategy == config::Strategy::Fsdp && c.fsdp_param_dtype != config::DType::Fp32;
}

// FSDP with a 16-bit parameter dtype computes in that dtype directly, as PyTorch's
// MixedPrecisionPolicy does: autocast would only add casts. The fused kernels set their dtypes
// explicitly and run without autocast.
bool uses_autocast(const config::TrialConfig& c) {
  return (c.amp == Amp::Bf16 || c.amp == Amp::Fp16) && !fsdp_half(c) && !config::uses_fused_kernels(c.compile);
}

// The dtype the fused path's matmuls read: what autocast (or FSDP's gathered parameters) gives.
at::ScalarType compute_dtype(const config::TrialConfig& c) {
  if (fsdp_half(c)) return c.fsdp_param_dtype == config::DType::Bf16 ? at::kBFloat16 : at::kHalf;
  switch (c.amp) {
    case Amp::Bf16:
    case Amp::PureBf16:
    case Amp::Fp8: return at::kBFloat16;
    case Amp::Fp16: return at::kHalf;
    default: return at::kFloat;
  }
}

at::ScalarType param_dtype(Amp amp) { return amp == Amp::PureBf16 ? at::kBFloat16 : at::kFloat; }

// What `compile` and `amp fp8` need from this build and device, refused before any work.
void check_kernel_support(const config::TrialConfig& c, const DeviceContext& device, const EventSink& sink) {
  if (c.amp == Amp::Fp8) {
    if (!config::uses_fused_kernels(c.compile))
      throw EngineError("config", protocol::kExitConfig, "amp fp8 needs compile 'fused' or 'fused+graph': its casts are fused kernels");
    std::string why;
    if (!device.is_cuda() || !fp8_supported(&why)) throw unsupported(why.empty() ? "fp8 needs a Hopper GPU" : why);
  }
  if (config::uses_fused_kernels(c.compile) && !(device.is_cuda() && fused::kernels_built()))
    sink(protocol::Warning{"compile", std::string("compile '") + std::string(config::to_string(c.compile)) +
                                          "': no CUDA kernels on this " + (device.is_cuda() ? "build" : "device") +
                                          ", the fused ops run as their composite reference (same math, no speed-up)"});
}

void apply_kernel_settings(const config::TrialConfig& c) {
  // Only the portable switch (docs/ARCHITECTURE.md, "libtorch 1.13 and 2.11": TF32): "high" allows
  // TF32 matmuls, "highest" forbids.
  at::globalContext().setFloat32MatmulPrecision(c.amp == Amp::Fp32 ? "highest" : "high");
  at::globalContext().setBenchmarkCuDNN(c.cudnn_benchmark);
}

}  // namespace

// ============================================================================================
// Construction
// ============================================================================================

Trainer::Trainer(const config::TrialConfig& config, const DeviceContext& device, RankInfo rank, EventSink sink,
                 Communicator* comm, Switches switches)
    : m_config(config), m_device(device), m_rank(rank), m_sink(std::move(sink)), m_comm(comm),
      m_switches(std::move(switches)) {
  if (m_config.amp == Amp::Fp16 && !m_device.is_cuda())
    throw unsupported("fp16 autocast with loss scaling needs a GPU; use bf16 on the CPU");
  check_kernel_support(m_config, m_device, m_sink);
  apply_kernel_settings(m_config);
  // First, so that running out of memory while the model is built is recorded too ("setup").
  m_memory = std::make_unique<MemorySampler>(m_device, [this] { return known_tensors(); }, m_switches.memory_phases);

  at::manual_seed(m_config.seed);  // identical initial weights on every rank
  const auto options = at::TensorOptions().device(m_device.device()).dtype(param_dtype(m_config.amp));
  m_model = std::make_unique<LlamaModel>(m_config.dims, options);
  m_model->prepare_rope(m_config.seq_len, m_device.device());
  const AttentionPick attention = choose_attention(m_config, m_device, compute_dtype(m_config), m_sink);
  m_attention = attention.described;
  ModelKernels kernels{config::uses_fused_kernels(m_config.compile), compute_dtype(m_config),
                       m_config.amp == Amp::Fp8, attention.head_dim};
  // One rank without a graph capture (the strategies that reduce gradients keep the dense
  // gradient they were measured with); the batch's distinct tokens are found on the host.
  kernels.sparse_embedding_grad = m_config.tied_lookup_rows();
  m_model->set_kernels(kernels);

  m_timeline = std::make_unique<Timeline>(m_device.is_cuda(), m_config.timing);
  gemm::use_switches(m_switches);
  // Kernel intervals are a GPU's: on the CPU the phases' own host times are the work.
  if (m_device.is_cuda() && m_config.timing && m_config.kernel_sample_every > 0 && m_config.kernel_sample_steps > 0)
    m_sampler = std::make_unique<KernelSampler>(true, config::uses_cuda_graph(m_config.compile), m_switches.sampler_dump);
  m_strategy = make_strategy(m_config, *m_model, m_comm, *m_timeline, m_rank.world_size);
  m_optimizer = std::make_unique<Optimizer>(m_config, m_strategy->optimizer_params(), m_switches.torch_adamw);
  if (!m_optimizer->fallback_reason().empty())
    m_sink(protocol::Warning{"optimizer", "the Tunebench AdamW kernel is not used (" + m_optimizer->fallback_reason() +
                                              "): PyTorch's fused AdamW runs"});
  // AdamW's weight copies (core/rules/optimizer_rules.h, the rule the memory prediction follows
  // too): where they may be written, step 0 runs without them and decide_weight_copies() measures
  // whether this device holds what they add.
  m_weight_copies_apply = m_optimizer->own_kernel() && rules::optimizer_weight_copies_apply(m_config, m_device.is_cuda());
  if (rules::half_weight_grads(m_config, m_device.is_cuda()) && m_optimizer->own_kernel()) {  // it reads bf16
    kernels.half_weight_grads = true;
    m_model->set_kernels(kernels);
  } else if (m_config.grad_dtype != config::DType::Fp32) {
    m_sink(protocol::Warning{"grad_dtype", "grad_dtype bf16 needs the Tunebench AdamW kernel on a GPU, which is not "
                                           "used here: the weight gradients stay fp32"});
  }
  if (m_config.amp == Amp::Fp16) m_scaler = std::make_unique<LossScaler>(m_device.device());
  if (m_config.optimizer_overlap) {  // config::validate: one rank, no clipping, no fp16, no graph
    std::vector<std::vector<at::Tensor>> units;
    for (const auto& u : m_model->units()) units.push_back(u.params);
    std::function<WeightCopies(size_t)> copies;
    if (m_weight_copies_apply)
      copies = [this](size_t u) { return m_weight_copies ? m_model->new_weight_copies(u) : WeightCopies{}; };
    m_overlap = std::make_unique<OptimizerOverlap>(*m_optimizer, std::move(units), std::move(copies), m_device.is_cuda());
  }
  if (config::uses_cuda_graph(m_config.compile)) prepare_graph();  // says why before any training happens

  // Checkpointed bodies and their recompute observers live as long as the trainer, because the
  // autograd graph of a step refers to them until its backward has run.
  const size_t units = m_model->unit_count();
  m_bodies.resize(units);
  m_recompute_observers.resize(units);
  m_recompute_handles.assign(units, -1);
  for (size_t u = 1; u + 1 < units; ++u) {
    m_bodies[u] = [this, u](const at::Tensor& x) { return m_model->unit_forward(u, x, m_strategy->unit_params(u)); };
    m_recompute_observers[u] = [this, u](bool begin) {
      if (begin) {
        m_strategy->before_unit_forward(u);
        m_recompute_handles[u] = m_timeline->begin(Phase::Recompute, m_model->units()[u].name);
      } else {
        m_timeline->end(m_recompute_handles[u]);
      }
    };
  }
}



protocol::ModelInfo Trainer::model_info() const {
  protocol::ModelInfo m;
  m.parameters = m_model->parameter_count();
  m.matmul_parameters = m_model->matmul_parameter_count();
  m.flops_per_token = m_model->flops_per_token(m_config.seq_len);
  m.flops_formula = LlamaModel::flops_formula();
  // predicted_peak_bytes stays 0: the benchmark predicts nothing (whoever reads the log and wants
  // the prediction has the config: tunebench-cli predict / accuracy, the GUI's Prediction dock).
  int64_t bytes = 0;
  for (const auto& p : m_strategy->optimizer_params()) bytes += p.numel() * static_cast<int64_t>(p.element_size());
  m.parameter_bytes = bytes;
  m.attention = m_attention;
  return m;
}

// ============================================================================================
// The training step
// ============================================================================================

at::Tensor Trainer::forward_loss(const at::Tensor& tokens) {
  const at::Tensor inputs = tokens.narrow(1, 0, tokens.size(1) - 1);
  const at::Tensor targets = tokens.narrow(1, 1, tokens.size(1) - 1);
  const auto device_type = m_device.device().type();
  std::optional<compat::AutocastGuard> autocast;
  if (uses_autocast(m_config))
    autocast.emplace(device_type, true, m_config.amp == Amp::Bf16 ? at::kBFloat16 : at::kHalf);

  at::Tensor h = inputs;
  const size_t units = m_model->unit_count();
  for (size_t u = 0; u < units; ++u) {
    m_strategy->before_unit_forward(u);
    const bool block = u > 0 && u + 1 < units;
    if (block && m_config.checkpointing)
      h = checkpointed(h, &m_bodies[u], &m_recompute_observers[u]);
    else if (u + 1 == units)
      h = m_model->head_loss(h, m_strategy->unit_params(u), targets);
    else
      h = m_model->unit_forward(u, h, m_strategy->unit_params(u));
    h = m_strategy->after_unit_forward(u, h);
  }
  return h;
}

// Tied embeddings on one rank: the batch's distinct tokens found on the host, where the batch is,
// and copied with it, instead of by a search on the device that would wait for it
// (fused::embedding_rows).
void Trainer::give_lookup_rows(const at::Tensor& batch) {
  const auto [rows, compact] = fused::distinct_tokens(batch.narrow(1, 0, batch.size(1) - 1));
  const at::Tensor both = at::cat({rows, compact.flatten()}).to(m_device.device());
  m_model->set_lookup_rows(both.narrow(0, 0, rows.numel()),
                           both.narrow(0, rows.numel(), compact.numel()).view(compact.sizes()));
}

// The one micro-step body every path runs: eager steps, the CUDA-graph capture and the tests'
// explicit batches. Returns the micro-step's loss (divided, unscaled), detached, on the device.
at::Tensor Trainer::micro_step(const at::Tensor& tokens, bool last, double loss_divisor) {
  m_strategy->begin_micro_step(last);
  m_memory->begin_forward(last);
  const int fwd = m_timeline->begin(Phase::Forward);
  const at::Tensor loss = forward_loss(tokens) / loss_divisor;
  m_timeline->end(fwd);
  m_memory->end_forward(last);
  const int bwd = m_timeline->begin(Phase::Backward);
  if (m_overlap && last) m_overlap->arm();
  (m_scaler ? m_scaler->scale(loss) : loss).backward();
  m_timeline->end(bwd);
  m_strategy->after_backward(last);
  m_memory->end_backward(last);
  return loss.detach();
}

double Trainer::forward_backward(const at::Tensor& tokens, double loss_divisor) {
  return micro_step(tokens.to(m_device.device()), true, loss_divisor).item<double>() * loss_divisor;
}

void Trainer::optimizer_step() {
  if (m_overlap) {  // most units were updated during the backward; the rest, and the wait, here
    if (!m_overlap->finish()) m_model->drop_weight_copies();
    m_strategy->after_optimizer();
    m_last_found_inf = at::Tensor();
    m_model->end_step();
    return;
  }
  // This step's float8 amax becomes the history now, before the update: the AdamW kernel that
  // writes the next forward's float8 weights scales them with it, as that forward's cast would
  // have (kernels/fp8_linear.h), and records their amax for the step after.
  m_model->end_step();
  std::vector<at::Tensor> grads = m_strategy->optimizer_grads();
  at::Tensor found_inf;
  if (m_scaler) found_inf = m_scaler->unscale(grads);
  if (m_config.grad_clip > 0) clip_grad_norm(grads, m_config.grad_clip);
  if (m_weight_copies) {
    // One GPU: `grads` becomes the gradients' only holder, so each unit's are freed as its update
    // (and its bf16 copy for the next forward) is queued: the copies take the gradients' place.
    m_strategy->after_optimizer();
    std::vector<size_t> sizes;
    for (const auto& u : m_model->units()) sizes.push_back(u.params.size());
    if (!m_optimizer->step_in_groups(grads, sizes, [this](size_t u) { return m_model->new_weight_copies(u); }))
      m_model->drop_weight_copies();
  } else {
    m_optimizer->step(grads, found_inf);
    if (m_scaler) m_scaler->update(found_inf);
    m_strategy->after_optimizer();
  }
  m_last_found_inf = found_inf;
}

double Trainer::train_step(const std::vector<at::Tensor>& micro_batches) {
  const double n = static_cast<double>(micro_batches.size());
  at::Tensor loss_sum = at::zeros({}, at::TensorOptions().device(m_device.device()).dtype(at::kFloat));
  for (size_t i = 0; i < micro_batches.size(); ++i)
    loss_sum.add_(micro_step(micro_batches[i].to(m_device.device()), i + 1 == micro_batches.size(), n));
  optimizer_step();
  return loss_sum.item<double>();
}

protocol::Step Trainer::run_step(int64_t index) {
  protocol::Step step;
  step.step = index;
  step.warmup = index < m_config.warmup;
  step.start_us = protocol::now_us();
  const int64_t accum = m_config.grad_accum;
  const bool non_blocking = m_config.pin_memory && m_device.is_cuda();
  at::Tensor loss_sum = at::zeros({}, at::TensorOptions().device(m_device.device()).dtype(at::kFloat));

  for (int64_t micro = 0; micro < accum; ++micro) {
    const bool last = micro + 1 == accum;
    // host lane: wait for the loader, then issue the copy
    const int64_t t0 = protocol::now_us();
    const at::Tensor batch = m_data->next();
    const int64_t t1 = protocol::now_us();
    const at::Tensor tokens = batch.to(m_device.device(), /*non_blocking=*/non_blocking);
    if (m_config.tied_lookup_rows()) give_lookup_rows(batch);
    const int64_t t2 = protocol::now_us();
    m_timeline->add_host(Phase::DataWait, t0, t1);
    m_timeline->add_host(Phase::HostToDevice, t1, t2);

    loss_sum.add_(micro_step(tokens, last, static_cast<double>(accum)));
  }

  m_memory->begin_optimizer();
  const int opt = m_timeline->begin(Phase::Optimizer);
  optimizer_step();
  m_timeline->end(opt);
  m_memory->end_optimizer();
  if (m_switches.memory_phases)
    m_sink(protocol::Log{"info", "memory phases, step " + std::to_string(index) + ":" + m_memory->take_phase_log()});

  return finish_step(std::move(step), loss_sum);
}

// Between steps: the GEMM algorithm search for the shapes the step met first (normally all of them,
// in step 0; gemm_search.h). Its scratch is not the trial's memory, so the allocator's peak is
// carried over it and reset after it. After the first step the log says what it chose.
void Trainer::search_gemms(bool first_step) {
  if (gemm::pending()) m_memory->set_peak_aside([] { gemm::search_pending(); });
  if (first_step && config::uses_fused_kernels(m_config.compile) && m_device.is_cuda())
    m_sink(protocol::Log{"info", gemm::describe(gemm::summary())});
}

// After step 0, which ran without them: whether AdamW writes the next forward's weights from step
// 1's update on. rules::weight_copies_fit with this device's figures: the copies add at most
// rules::weight_copies_added_bytes (of this model's copy sizes), and the device's memory nothing
// holds after step 0 (the caching allocator keeps what step 0 needed) must hold that. The
// decision and its figures go into the trial's log.
void Trainer::decide_weight_copies() {
  if (!m_weight_copies_apply) return;
  int64_t largest = 0, all = 0;
  for (size_t u = 0; u < m_model->unit_count(); ++u) {
    largest = std::max(largest, m_model->weight_copy_bytes(u));
    all += m_model->weight_copy_bytes(u);
  }
  const int64_t added = rules::weight_copies_added_bytes(m_config, largest, all);
  const int64_t free = m_device.free_memory_bytes();
  m_weight_copies = rules::weight_copies_fit(added, free);
  char figures[96];
  std::snprintf(figures, sizeof figures, "they add at most %.2f GiB; %.2f GiB of the device free after step 0",
                static_cast<double>(added) / (1 << 30), static_cast<double>(free) / (1 << 30));
  m_sink(protocol::Log{"info", m_weight_copies
                                   ? std::string("weight copies: AdamW writes the next forward's weights from step 1's "
                                                 "update on (") + figures + ")"
                                   : std::string("weight copies: not written, the forward casts its weights (") +
                                         figures + ")"});
}

protocol::Step Trainer::finish_step(protocol::Step step, const at::Tensor& loss_sum) {
  // The step's one synchronisation: everything queued for this step has run after it returns.
  m_timeline->mark_step_end();
  m_device.synchronize();
  step.end_us = protocol::now_us();
  step.step_ms = static_cast<double>(step.end_us - step.start_us) / 1000.0;
  step.loss = loss_sum.item<double>();
  step.tokens = m_config.tokens_per_rank_step();
  step.memory = m_device.memory();
  step.memory.peak_bytes = std::max(step.memory.peak_bytes, m_memory->carried_peak());
  if (m_last_found_inf.defined()) step.skipped = m_last_found_inf.item<float>() != 0.f;
  step.intervals = m_timeline->collect(step.end_us);
  summarise_comm(step, m_rank.world_size);
  return step;
}

protocol::Summary Trainer::run() {
  m_sink(model_info());
  m_data = std::make_unique<DataPipeline>(m_config, m_rank.rank, m_rank.world_size, m_config.steps * m_config.grad_accum,
                                          m_config.pin_memory && m_device.is_cuda());
  m_device.reset_peak_memory();
  if (m_sampler)
    m_sink(protocol::Log{"info", "kernel sampling: the device's kernel intervals are recorded on " +
                                     std::to_string(m_config.kernel_sample_steps) + " of every " +
                                     std::to_string(m_config.kernel_sample_every) + " measured steps (" +
                                     m_sampler->source() + ")"});
  std::vector<protocol::Step> measured;
  bool memory_sampling = false;
  for (int64_t i = 0; i < m_config.steps; ++i) memory_sampling = memory_sampling || m_config.memory_sampled(i);
  if (memory_sampling && !m_memory->available()) {
    m_sink(protocol::Warning{"memory-categories",
                             "memory categories unknown on CPU: they come from the CUDA caching allocator's blocks, "
                             "which a CPU run does not have (the steps' memory is the process's resident set)"});
    m_sink(protocol::Warning{"memory-timeline",
                             "memory timeline unknown on CPU: it reads the CUDA caching allocator, which a CPU run "
                             "does not have"});
  }
  for (int64_t i = 0; i < m_config.steps; ++i) {
    // compile: eager warm-up, capture on the last warm-up step, replay from then on.
    const bool graph = m_config.graph_step(i);
    const bool sampled = m_sampler && m_config.kernel_sampled(i);
    // A replayed graph allocates nothing: memory is sampled on eager steps only.
    m_memory->begin_step(i, m_config.memory_sampled(i), !graph);
    if (sampled) begin_sample(i);
    protocol::Step step = graph ? run_graph_step(i, i == m_config.warmup - 1) : run_step(i);
    if (sampled) finish_sample(step);
    finish_memory_sample(step);
    search_gemms(i == 0);
    if (i == 0) decide_weight_copies();
    if (!step.warmup) measured.push_back(step);
    m_sink(std::move(step));
  }
  return summarise(measured, m_model->flops_per_token(m_config.seq_len), m_device.peak_flops(),
                   std::max(m_device.memory().peak_bytes, m_memory->carried_peak()));
}

// ============================================================================================
// Memory by category (diagnostics): memory_sampler.h
// ============================================================================================

KnownTensors Trainer::known_tensors() {
  KnownTensors k;
  if (!m_strategy) return k;  // the model is still being built
  k.parameters = m_strategy->optimizer_params();
  for (const auto& p : k.parameters)
    if (p.grad().defined()) k.gradients.push_back(p.grad());
  Strategy::Held held = m_strategy->held_tensors();
  k.parameters.insert(k.parameters.end(), held.parameters.begin(), held.parameters.end());
  k.gradients.insert(k.gradients.end(), held.gradients.begin(), held.gradients.end());
  k.communication = std::move(held.communication);
  if (m_optimizer) k.optimizer_state = m_optimizer->state_tensors();
  return k;
}

void Trainer::finish_memory_sample(protocol::Step& step) {
  step.memory_timeline = m_memory->take_timeline(step.start_us);
  if (auto categories = m_memory->finish_step()) {
    step.memory_sampled = true;
    step.memory_categories = std::move(*categories);
    if (m_snapshot_sink)
      m_snapshot_sink(m_memory->last_snapshot(), step.memory_categories, step.step, m_memory->last_counters().allocated_bytes,
                      m_memory->last_counters().reserved_bytes);
  } else if (!m_memory->problem().empty()) {
    m_sink(protocol::Warning{"memory-categories", "step " + std::to_string(step.step) +
                                                      ": memory categories unknown: " + m_memory->problem()});
  }
}

// ============================================================================================
// Kernel sampling (diagnostics): outside the step's clock, on sampled steps only
// ============================================================================================

void Trainer::begin_sample(int64_t /*index*/) {
  if (m_sampler && !m_sampler->begin()) {
    m_sink(protocol::Warning{"kernel-sampling", "kernel sampling is off: " + m_sampler->problem() +
                                                    ". GPU busy and the causes of GPU idle time are unknown."});
    m_sampler.reset();
  }
}

void Trainer::finish_sample(protocol::Step& step) {
  if (!m_sampler || !m_sampler->active()) return;
  metrics::StepActivity activity = m_sampler->finish(step.start_us, step.end_us, m_timeline->host_windows());
  if (!m_sampler->problem().empty()) {
    m_sink(protocol::Warning{"kernel-sampling", "kernel sampling is off: " + m_sampler->problem() +
                                                    ". GPU busy and the causes of GPU idle time are unknown."});
    m_sampler.reset();
    return;
  }
  KernelSampler::apply(step, std::move(activity), m_rank.world_size);
}

at::Tensor Trainer::full_parameters() {
  at::NoGradGuard no_grad;
  std::vector<at::Tensor> flats;
  for (const auto& p : m_strategy->full_parameters()) flats.push_back(p.detach().flatten().to(at::kCPU, at::kFloat));
  return at::cat(flats);
}

}  // namespace tunebench::engine

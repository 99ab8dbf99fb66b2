// The benchmark loop of one rank: build the model on the device, then run `steps` optimizer
// steps, timing every phase, and report each step as an event.
//
// The trainer is the same for every strategy (see strategy/strategy.h). It deliberately does not
// know about processes, sockets or command lines: events leave through a callback, failures as
// EngineError. app/worker wires it to the outside world.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include <ATen/ATen.h>

#include "core/config/trial_config.h"
#include "core/engine/device.h"
#include "core/engine/switches.h"
#include "core/protocol/events.h"

namespace tunebench::metrics {
struct AllocatorSnapshot;
}

namespace tunebench::engine {

class Communicator;
class DataPipeline;
class LlamaModel;
class Optimizer;
class Strategy;
class Timeline;
class KernelSampler;
class LossScaler;
class OptimizerOverlap;
class MemorySampler;
struct KnownTensors;

using EventSink = std::function<void(protocol::Payload)>;

struct RankInfo {
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;
};

class Trainer {
 public:
  // Builds model, data pipeline, strategy and optimizer. `comm` is required for ddp/fsdp and
  // must outlive the trainer. `switches`: the worker's environment switches (switches.h), read
  // once by the worker; the default is none set. Throws EngineError on configurations this build
  // cannot run.
  Trainer(const config::TrialConfig& config, const DeviceContext& device, RankInfo rank, EventSink sink,
          Communicator* comm = nullptr, Switches switches = {});
  ~Trainer();

  // The model event (parameters, FLOPs, the attention kernel); also sent by run().
  protocol::ModelInfo model_info() const;
  // Runs every step and returns the summary of the measured (non-warm-up) steps.
  protocol::Summary run();

  // Every parameter of the model in unit order as float32 on the CPU, flat (FSDP gathers them).
  at::Tensor full_parameters();
  // For tests: the model and the parameters the optimizer updates.
  LlamaModel& model() { return *m_model; }
  Strategy& strategy() { return *m_strategy; }
  const OptimizerOverlap* optimizer_overlap() const { return m_overlap.get(); }  // optimizer_overlap on
  // One micro-batch forward + backward on explicit tokens [B, T+1], no optimizer (tests compare
  // gradients). Returns the loss.
  double forward_backward(const at::Tensor& tokens, double loss_divisor = 1.0);
  // One full optimizer step on explicit micro-batches (tests).
  double train_step(const std::vector<at::Tensor>& micro_batches);
  // Called with each memory-sampled step's allocator snapshot and its categories
  // (TUNEBENCH_MEMORY_SNAPSHOT: the worker writes it to a file).
  // `allocated`, `reserved`: the allocator's own counters read right after the snapshot.
  using SnapshotSink = std::function<void(const metrics::AllocatorSnapshot&, const protocol::MemoryCategories&,
                                          int64_t step, int64_t allocated, int64_t reserved)>;
  void set_snapshot_sink(SnapshotSink sink) { m_snapshot_sink = std::move(sink); }

 private:
  at::Tensor forward_loss(const at::Tensor& tokens);
  at::Tensor micro_step(const at::Tensor& tokens, bool last, double loss_divisor);
  protocol::Step run_step(int64_t index);
  void optimizer_step();
  // "compile" graph: capture the whole step into a CUDA graph (trainer_graph.cpp).
  struct Graph;
  void prepare_graph();
  protocol::Step run_graph_step(int64_t index, bool capture);
  protocol::Step finish_step(protocol::Step step, const at::Tensor& loss_sum);
  // Kernel sampling (timing/kernel_sampler.h) around step `index` when the config samples it.
  void begin_sample(int64_t index);
  void finish_sample(protocol::Step& step);

  config::TrialConfig m_config;
  const DeviceContext& m_device;
  RankInfo m_rank;
  EventSink m_sink;
  Communicator* m_comm;
  std::unique_ptr<LlamaModel> m_model;
  std::unique_ptr<Strategy> m_strategy;
  std::unique_ptr<Optimizer> m_optimizer;
  std::unique_ptr<OptimizerOverlap> m_overlap;  // optimizer_overlap: updates queued during the backward
  std::unique_ptr<Timeline> m_timeline;
  std::unique_ptr<KernelSampler> m_sampler;  // null: not sampling (CPU, timing off, period 0, or it failed)
  std::unique_ptr<LossScaler> m_scaler;
  std::unique_ptr<DataPipeline> m_data;
  std::vector<std::function<at::Tensor(const at::Tensor&)>> m_bodies;        // checkpointed unit bodies
  std::vector<std::function<void(bool)>> m_recompute_observers;              // one per unit
  std::vector<int> m_recompute_handles;
  at::Tensor m_last_found_inf;
  std::string m_attention;        // the SDPA kernel that runs and why (the model event's `attention`)
  Switches m_switches;
  void give_lookup_rows(const at::Tensor& batch);
  void search_gemms(bool first_step);
  // AdamW writes the next forward's 16-bit (fp8: float8) weights: where rules::optimizer_weight_copies_apply
  // and the AdamW kernel runs (`_apply`), from step 1 on when step 0 showed room (decide_weight_copies).
  void decide_weight_copies();
  bool m_weight_copies_apply = false;
  bool m_weight_copies = false;
  std::shared_ptr<Graph> m_graph;  // shared_ptr: Graph is complete only in trainer_graph.cpp
  // Memory by category and the memory timeline (memory_sampler.h): the allocator on memory-sampled
  // steps (the kernel-sampled eager ones), the out-of-memory record; on the CPU a warning that says
  // they are unknown. TUNEBENCH_MEMORY_PHASES=1 (Switches::memory_phases, a diagnostic for the
  // memory model, docs/PREDICT.md): the sampler reads every step's phase boundaries and each eager
  // step logs the allocator's peak of its forward, backward and optimizer (the steps' peak_bytes
  // stay the run's peak: MemorySampler::carried_peak).
  KnownTensors known_tensors();
  void finish_memory_sample(protocol::Step& step);
  std::unique_ptr<MemorySampler> m_memory;
  SnapshotSink m_snapshot_sink;
};

}  // namespace tunebench::engine

// "compile" graph (and fused+graph): capture one whole training step (every micro-step's forward
// and backward, clipping, the optimizer) into a CUDA graph, then replay it. This removes
// kernel-launch and host overhead; the fusion is the fused kernels' job (compile fused).
//
// Capture rules followed here (docs/ARCHITECTURE.md, "libtorch 1.13 and 2.11": CUDA graphs): a
// non-default stream for the whole run, eager warm-up steps on it before capture, static inputs
// (each batch is copied into the same device buffer), gradients kept at fixed addresses (zeroed,
// never freed), no host synchronisation inside the step (hence the fused optimizer only),
// autocast's weight-cast cache off.
#include "core/engine/trainer.h"

#include "core/engine/memory_sampler.h"  // ~Trainer destroys the unique_ptr<MemorySampler>

#include "core/engine/compat.h"
#include "core/engine/data/data_pipeline.h"
#include "core/engine/errors.h"
#include "core/engine/model/llama.h"
#include "core/engine/optim/optimizer.h"
#include "core/engine/optim/optimizer_overlap.h"
#include "core/engine/strategy/strategy.h"
#include "core/engine/timing/kernel_sampler.h"
#include "core/engine/timing/timeline.h"

#ifdef TUNEBENCH_WITH_CUDA
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#endif

namespace tunebench::engine {

using protocol::Phase;

#ifdef TUNEBENCH_WITH_CUDA
struct Trainer::Graph {
  c10::cuda::CUDAStreamGuard stream;  // the capture stream is current for the whole run
  at::cuda::CUDAGraph graph;
  at::Tensor tokens;    // [accum, B, T+1] static input
  at::Tensor loss_sum;  // static output
  bool captured = false;
  explicit Graph(c10::DeviceIndex device) : stream(c10::cuda::getStreamFromPool(false, device)) {}
};
#else
struct Trainer::Graph {};
#endif

// Defined here, where Graph is a complete type.
Trainer::~Trainer() = default;

void Trainer::prepare_graph() {
#ifdef TUNEBENCH_WITH_CUDA
  if (!m_device.is_cuda()) throw unsupported("compile 'graph' captures CUDA graphs and needs a GPU");
  if (m_config.strategy != config::Strategy::Single)
    throw unsupported("CUDA-graph capture runs a single rank; use compile 'fused' with ddp/fsdp");
  if (m_config.amp == config::Amp::Fp16 && !m_optimizer->fused())
    throw unsupported("'compile' with fp16 loss scaling needs the fused AdamW kernel (libtorch 2.x with CUDA)");
  if (m_config.grad_clip > 0 && !m_optimizer->fused())
    throw unsupported("'compile' needs the fused optimizer");
  if (m_config.optimizer != config::Optimizer::AdamW || !m_optimizer->fused())
    throw unsupported("'compile' needs a capturable optimizer: fused AdamW (libtorch 2.x with CUDA)");
  static_cast<SingleStrategy&>(*m_strategy).set_keep_grads(true);
  m_graph = std::make_shared<Graph>(m_device.device().index());
#else
  throw unsupported("'compile' captures CUDA graphs; this worker was built without CUDA");
#endif
}

protocol::Step Trainer::run_graph_step(int64_t index, bool capture) {
#ifdef TUNEBENCH_WITH_CUDA
  Graph& g = *m_graph;
  protocol::Step step;
  step.step = index;
  step.warmup = index < m_config.warmup;
  step.start_us = protocol::now_us();
  const int64_t accum = m_config.grad_accum;
  if (!g.tokens.defined()) {
    g.tokens = at::empty({accum, m_config.micro_batch, m_config.seq_len + 1},
                         at::TensorOptions().device(m_device.device()).dtype(at::kLong));
    g.loss_sum = at::zeros({}, at::TensorOptions().device(m_device.device()).dtype(at::kFloat));
  }
  for (int64_t micro = 0; micro < accum; ++micro) {
    const int64_t t0 = protocol::now_us();
    const at::Tensor batch = m_data->next();
    const int64_t t1 = protocol::now_us();
    g.tokens[micro].copy_(batch, /*non_blocking=*/m_config.pin_memory);
    m_timeline->add_host(Phase::DataWait, t0, t1);
    m_timeline->add_host(Phase::HostToDevice, t1, protocol::now_us());
  }
  if (capture) {
    // The graph allocates from a private pool: hand the eager steps' cached blocks back first, or
    // a 7B step finds the device full of reserved-but-unused memory (seen on the H200).
    m_device.synchronize();
    c10::cuda::CUDACachingAllocator::emptyCache();
    m_timeline->set_paused(true);
    at::autocast::set_autocast_cache_enabled(false);
    try {
      g.graph.capture_begin();
      g.loss_sum.zero_();
      for (int64_t micro = 0; micro < accum; ++micro)
        g.loss_sum.add_(micro_step(g.tokens[micro], micro + 1 == accum, static_cast<double>(accum)));
      optimizer_step();
      g.graph.capture_end();
    } catch (const c10::Error& e) {
      at::autocast::set_autocast_cache_enabled(true);
      throw unsupported(std::string("CUDA-graph capture of the step failed: ") + e.what_without_backtrace());
    }
    at::autocast::set_autocast_cache_enabled(true);
    m_timeline->set_paused(false);
    g.captured = true;
  }
  const int h = m_timeline->begin(Phase::Other, "CUDA graph: forward+backward+optimizer");
  g.graph.replay();
  m_timeline->end(h);
  return finish_step(std::move(step), g.loss_sum);
#else
  (void)index;
  (void)capture;
  throw unsupported("'compile' needs a CUDA build");
#endif
}

}  // namespace tunebench::engine

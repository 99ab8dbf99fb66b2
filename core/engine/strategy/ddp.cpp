#include "core/engine/strategy/ddp.h"

#include "core/engine/grad_hooks.h"
#include "core/engine/model/llama.h"

namespace tunebench::engine {

DdpStrategy::DdpStrategy(const config::TrialConfig& config, LlamaModel& model, Communicator& comm)
    : m_config(config), m_model(model), m_comm(comm), m_params(model.parameters()) {
  // Replicas start identical: rank 0's weights are broadcast (also warms up the communicator).
  for (auto& unit : m_model.units()) m_comm.broadcast(unit.flat);

  // Buckets in reverse parameter order: the last layers' gradients are ready first.
  const int64_t elem = static_cast<int64_t>(m_params.front().element_size());
  const int64_t first_cap = static_cast<int64_t>(m_config.first_bucket_mb * 1024 * 1024) / elem;
  const int64_t cap = static_cast<int64_t>(m_config.bucket_mb * 1024 * 1024) / elem;
  m_bucket_of.assign(m_params.size(), 0);
  std::vector<std::vector<size_t>> layout(1);
  int64_t filled = 0;
  for (size_t k = m_params.size(); k-- > 0;) {
    const int64_t limit = layout.size() == 1 ? first_cap : cap;
    if (filled > 0 && filled + m_params[k].numel() > limit) {
      layout.emplace_back();
      filled = 0;
    }
    layout.back().push_back(k);
    filled += m_params[k].numel();
  }
  const auto opts = m_params.front().options();
  for (size_t b = 0; b < layout.size(); ++b) {
    Bucket bucket;
    bucket.params = layout[b];
    int64_t numel = 0;
    for (size_t k : bucket.params) numel += m_params[k].numel();
    bucket.buffer = at::zeros({numel}, opts);
    if (m_config.compression != config::Compression::None)
      bucket.compressed = at::empty({numel}, opts.dtype(m_config.compression == config::Compression::Bf16 ? at::kBFloat16
                                                                                                      : at::kHalf));
    bucket.label = "bucket " + std::to_string(b);
    int64_t offset = 0;
    for (size_t k : bucket.params) {
      m_bucket_of[k] = b;
      // The gradient IS the bucket slice: autograd accumulates into it in place.
      m_params[k].mutable_grad() = bucket.buffer.narrow(0, offset, m_params[k].numel()).view(m_params[k].sizes());
      offset += m_params[k].numel();
    }
    m_buckets.push_back(std::move(bucket));
  }
  // Post-accumulate hooks: fire after .grad was updated (as c10d::Reducer's hooks do).
  for (size_t k = 0; k < m_params.size(); ++k) {
    m_accumulators.push_back(on_gradient_accumulated(m_params[k], [this, k] { on_grad_ready(k); }));
  }
}

DdpStrategy::~DdpStrategy() = default;

std::vector<std::vector<size_t>> DdpStrategy::bucket_layout() const {
  std::vector<std::vector<size_t>> out;
  for (const auto& b : m_buckets) out.push_back(b.params);
  return out;
}

void DdpStrategy::begin_micro_step(bool last_micro_step) {
  std::lock_guard<std::mutex> lock(m_mutex);
  m_sync = last_micro_step;  // no_sync: accumulate locally, communicate on the last micro-step
  for (auto& b : m_buckets) {
    b.pending = b.params.size();
    b.launched = false;
    b.work.reset();
  }
  m_next_launch = 0;
}

const std::vector<at::Tensor>& DdpStrategy::unit_params(size_t unit) { return m_model.units()[unit].params; }

void DdpStrategy::on_grad_ready(size_t param) {
  std::lock_guard<std::mutex> lock(m_mutex);
  if (!m_sync) return;
  Bucket& b = m_buckets[m_bucket_of[param]];
  if (b.pending > 0) --b.pending;
  if (m_config.ddp_overlap) launch_ready_buckets(false);
}

void DdpStrategy::launch_ready_buckets(bool force) {
  while (m_next_launch < m_buckets.size()) {
    Bucket& b = m_buckets[m_next_launch];
    if (!force && b.pending > 0) return;
    launch(b);
    ++m_next_launch;
  }
}

void DdpStrategy::launch(Bucket& b) {
  if (b.compressed.defined()) {
    b.compressed.copy_(b.buffer);
    b.work = m_comm.all_reduce_avg(b.compressed, b.label);
  } else {
    b.work = m_comm.all_reduce_avg(b.buffer, b.label);
  }
  b.launched = true;
}

void DdpStrategy::after_backward(bool last_micro_step) {
  if (!last_micro_step) return;
  std::lock_guard<std::mutex> lock(m_mutex);
  launch_ready_buckets(true);  // overlap off, or parameters that received no gradient
  for (auto& b : m_buckets) {
    b.work->wait();  // the optimizer's stream waits; the host does not block
    if (b.compressed.defined()) b.buffer.copy_(b.compressed);
  }
}

std::vector<at::Tensor> DdpStrategy::optimizer_params() { return m_params; }

// The buckets' flat buffers hold the gradients (the parameters' .grad are views of them); a
// compressed copy is what travels.
Strategy::Held DdpStrategy::held_tensors() const {
  Held h;
  for (const auto& b : m_buckets) {
    h.gradients.push_back(b.buffer);
    h.communication.push_back(b.compressed);
  }
  return h;
}

std::vector<at::Tensor> DdpStrategy::optimizer_grads() {
  std::vector<at::Tensor> grads;
  grads.reserve(m_params.size());
  for (const auto& p : m_params) grads.push_back(p.grad());
  return grads;
}

void DdpStrategy::after_optimizer() {
  at::NoGradGuard no_grad;
  for (auto& b : m_buckets) b.buffer.zero_();
}

int64_t DdpStrategy::comm_bytes_per_step() const {
  int64_t n = 0;
  for (const auto& b : m_buckets) {
    const auto& t = b.compressed.defined() ? b.compressed : b.buffer;
    n += t.numel() * static_cast<int64_t>(t.element_size());
  }
  return n;
}

}  // namespace tunebench::engine

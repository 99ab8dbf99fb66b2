#include "core/engine/strategy/fsdp.h"

#include "core/engine/grad_hooks.h"
#include "core/engine/model/llama.h"

namespace tunebench::engine {
namespace {

at::ScalarType to_scalar(config::DType d) {
  switch (d) {
    case config::DType::Bf16: return at::kBFloat16;
    case config::DType::Fp16: return at::kHalf;
    default: return at::kFloat;
  }
}

// Releasing and re-materialising a tensor's storage in place: views and the tensors autograd
// saved keep pointing at the same StorageImpl, so a re-gathered buffer is seen by all of them
// (docs/ARCHITECTURE.md, "libtorch 1.13 and 2.11": FSDP storage). The caching allocator receives
// the memory back immediately.
void release_storage(const at::Tensor& t) {
  c10::StorageImpl* impl = t.storage().unsafeGetStorageImpl();
  impl->set_data_ptr_noswap(at::DataPtr(nullptr, t.device()));
  impl->set_nbytes(0);
}

// Leaf parameters over `full`'s storage with version counters of their own: writing a freshly
// gathered buffer must not look like an in-place change of the tensors autograd saved (a
// detach()ed view would share `full`'s counter, and Gloo's copy into the buffer bumps it).
std::vector<at::Tensor> leaves_over(const at::Tensor& full, const std::vector<std::vector<int64_t>>& shapes) {
  std::vector<at::Tensor> out;
  int64_t offset = 0;
  for (const auto& shape : shapes) {
    std::vector<int64_t> strides(shape.size(), 1);
    for (size_t i = shape.size(); i-- > 1;) strides[i - 1] = strides[i] * shape[i];
    at::Tensor leaf = at::empty({0}, full.options());
    leaf.set_(full.storage(), full.storage_offset() + offset, shape, strides);
    out.push_back(leaf.requires_grad_(true));
    int64_t n = 1;
    for (auto v : shape) n *= v;
    offset += n;
  }
  return out;
}

void materialize_storage(const at::Tensor& t, size_t nbytes) {
  c10::StorageImpl* impl = t.storage().unsafeGetStorageImpl();
  impl->set_data_ptr_noswap(impl->allocator()->allocate(nbytes));
  impl->set_nbytes(nbytes);
}

}  // namespace

FsdpStrategy::FsdpStrategy(const config::TrialConfig& config, LlamaModel& model, Communicator& comm)
    : m_config(config), m_model(model), m_comm(comm),
      m_compute_dtype(to_scalar(config.fsdp_param_dtype)), m_reduce_dtype(to_scalar(config.fsdp_reduce_dtype)) {
  at::NoGradGuard no_grad;
  const int world = m_comm.size();
  const int rank = m_comm.rank();
  auto& units = m_model.units();
  m_units.resize(units.size());
  for (size_t u = 0; u < units.size(); ++u) {
    Unit& unit = m_units[u];
    ModelUnit& mu = units[u];
    unit.name = mu.name;
    unit.numel = mu.flat.numel();
    unit.shard_numel = (unit.numel + world - 1) / world;
    // Every rank built the same full unit from the seed; keep this rank's slice, drop the rest.
    unit.shard = at::zeros({unit.shard_numel}, mu.flat.options());
    const int64_t begin = rank * unit.shard_numel;
    const int64_t count = std::max<int64_t>(0, std::min(unit.numel - begin, unit.shard_numel));
    if (count > 0) unit.shard.narrow(0, 0, count).copy_(mu.flat.narrow(0, begin, count));
    m_shards.push_back(unit.shard);
    // The gathered buffer (compute dtype, padded) and the leaf views the unit computes with.
    unit.full = at::empty({unit.shard_numel * world}, mu.flat.options().dtype(m_compute_dtype));
    unit.params = leaves_over(unit.full, LlamaModel::unit_shapes(m_model.dims(), u));
    release_storage(unit.full);
    // The model's own full-size copy goes away: only shards stay resident.
    mu.flat = unit.full;
    mu.params = unit.params;
  }
  for (size_t u = 0; u < m_units.size(); ++u)
    for (const at::Tensor& p : m_units[u].params) {
      m_accumulators.push_back(on_gradient_accumulated(p, [this, u] { on_grad_ready(u); }));
    }
}

FsdpStrategy::~FsdpStrategy() = default;

void FsdpStrategy::gather(Unit& unit) {
  if (unit.gathered) return;
  materialize_storage(unit.full, static_cast<size_t>(unit.full.numel()) * unit.full.element_size());
  const at::Tensor source = unit.shard.scalar_type() == m_compute_dtype ? unit.shard : unit.shard.to(m_compute_dtype);
  unit.gather = m_comm.all_gather(unit.full, source, unit.name);
  unit.gathered = true;
}

void FsdpStrategy::wait_gathered(Unit& unit) {
  if (unit.gather) {
    unit.gather->wait();
    unit.gather.reset();
  }
}

void FsdpStrategy::reshard(Unit& unit) {
  if (!unit.gathered) return;
  wait_gathered(unit);
  release_storage(unit.full);
  unit.gathered = false;
}

void FsdpStrategy::begin_micro_step(bool last_micro_step) {
  (void)last_micro_step;  // FSDP reduce-scatters every micro-step and accumulates the shards
  std::lock_guard<std::recursive_mutex> lock(m_mutex);
  m_in_backward = false;
}

void FsdpStrategy::before_unit_forward(size_t u) {
  std::lock_guard<std::recursive_mutex> lock(m_mutex);
  gather(m_units[u]);
  // Forward prefetch: the next unit's all-gather runs while this unit computes. Not during the
  // recompute of a checkpointed unit in backward (the next unit is not needed again).
  if (m_config.fsdp_prefetch && !m_in_backward && u + 1 < m_units.size()) gather(m_units[u + 1]);
  wait_gathered(m_units[u]);
}

const std::vector<at::Tensor>& FsdpStrategy::unit_params(size_t u) { return m_units[u].params; }

at::Tensor FsdpStrategy::after_unit_forward(size_t u, at::Tensor output) {
  {
    std::lock_guard<std::recursive_mutex> lock(m_mutex);
    // ZeRO-3 frees the parameters until backward; the head is needed again at once.
    if (m_config.fsdp_mode == config::FsdpMode::FullShard && u + 1 < m_units.size()) reshard(m_units[u]);
  }
  if (output.requires_grad())
    output.register_hook([this, u](const at::Tensor& grad) {
      pre_backward(u);
      return grad;
    });
  return output;
}

void FsdpStrategy::pre_backward(size_t u) {
  std::lock_guard<std::recursive_mutex> lock(m_mutex);
  m_in_backward = true;
  Unit& unit = m_units[u];
  gather(unit);
  if (m_config.fsdp_prefetch && u > 0) gather(m_units[u - 1]);  // backward prefetch
  wait_gathered(unit);
  // Gradients accumulate into one flat buffer, so the reduce-scatter needs no copy.
  unit.grad_full = at::zeros({unit.full.numel()}, unit.full.options());
  const auto shapes = LlamaModel::unit_shapes(m_model.dims(), u);
  const auto views = views_of(unit.grad_full, shapes);
  for (size_t i = 0; i < unit.params.size(); ++i) unit.params[i].mutable_grad() = views[i];
  unit.pending_grads = unit.params.size();
}

void FsdpStrategy::on_grad_ready(size_t u) {
  std::lock_guard<std::recursive_mutex> lock(m_mutex);
  Unit& unit = m_units[u];
  if (unit.pending_grads == 0 || --unit.pending_grads > 0) return;
  // All of this unit's gradients are in: reduce-scatter them, then reshard.
  at::Tensor input = unit.grad_full.scalar_type() == m_reduce_dtype ? unit.grad_full : unit.grad_full.to(m_reduce_dtype);
  unit.reduced = at::empty({unit.shard_numel}, input.options());
  unit.reduce = m_comm.reduce_scatter_avg(unit.reduced, input, unit.name);
  for (auto& p : unit.params) p.mutable_grad().reset();
  unit.grad_full = at::Tensor();
  reshard(unit);
}

void FsdpStrategy::after_backward(bool last_micro_step) {
  (void)last_micro_step;
  std::lock_guard<std::recursive_mutex> lock(m_mutex);
  at::NoGradGuard no_grad;
  for (Unit& unit : m_units) {
    if (!unit.reduce) continue;
    unit.reduce->wait();
    unit.reduce.reset();
    at::Tensor g = unit.reduced.scalar_type() == unit.shard.scalar_type() ? unit.reduced
                                                                           : unit.reduced.to(unit.shard.scalar_type());
    if (m_first_micro_step || !unit.shard_grad.defined()) unit.shard_grad = g;
    else unit.shard_grad.add_(g);
    unit.reduced = at::Tensor();
  }
  m_first_micro_step = false;
  for (Unit& unit : m_units) reshard(unit);  // the head, and anything left gathered
  m_in_backward = false;
}

std::vector<at::Tensor> FsdpStrategy::optimizer_params() { return m_shards; }

// A unit's gathered parameters while gathered, its gradients (full during its backward, then the
// shard) and the reduce-scatter's output.
Strategy::Held FsdpStrategy::held_tensors() const {
  Held h;
  for (const Unit& u : m_units) {
    h.parameters.push_back(u.full);
    h.gradients.push_back(u.grad_full);
    h.gradients.push_back(u.shard_grad);
    h.communication.push_back(u.reduced);
  }
  return h;
}

std::vector<at::Tensor> FsdpStrategy::optimizer_grads() {
  std::vector<at::Tensor> grads;
  for (Unit& unit : m_units) grads.push_back(unit.shard_grad.defined() ? unit.shard_grad : at::zeros_like(unit.shard));
  return grads;
}

void FsdpStrategy::after_optimizer() {
  for (Unit& unit : m_units) unit.shard_grad = at::Tensor();  // as zero_grad(set_to_none=True)
  m_first_micro_step = true;
}

std::vector<at::Tensor> FsdpStrategy::full_parameters() {
  std::vector<at::Tensor> out;
  for (Unit& unit : m_units) {
    at::Tensor full = at::empty({unit.shard_numel * m_comm.size()}, unit.shard.options());
    m_comm.all_gather(full, unit.shard, unit.name + " (export)")->wait();
    out.push_back(full.narrow(0, 0, unit.numel));
  }
  return out;
}

int64_t FsdpStrategy::comm_bytes_per_step() const {
  int64_t gather = 0, reduce = 0;
  for (const Unit& unit : m_units) {
    gather += unit.full.numel() * static_cast<int64_t>(c10::elementSize(m_compute_dtype));
    reduce += unit.full.numel() * static_cast<int64_t>(c10::elementSize(m_reduce_dtype));
  }
  const bool regather = m_config.fsdp_mode == config::FsdpMode::FullShard;
  return gather * (regather ? 2 : 1) + reduce;
}

}  // namespace tunebench::engine

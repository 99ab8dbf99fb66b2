// FSDP (ZeRO-2/3) the way PyTorch's fully_shard applies it: one unit per transformer block, the
// embedding and the head as units of their own; each unit's parameters are one flat buffer,
// sharded evenly over the ranks (padded). Before a unit runs, its shards are all-gathered into
// the full flat buffer in the parameter dtype; after its backward, the gradients (one flat
// buffer per unit) are reduce-scattered in the reduce dtype and the full buffer is released.
// FULL_SHARD also releases it after forward and gathers again in backward (ZeRO-3);
// SHARD_GRAD_OP keeps it from forward until backward (ZeRO-2). Prefetch issues the next unit's
// all-gather before the current unit computes. The optimizer sees only the local shards.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/config/trial_config.h"
#include "core/engine/comm/communicator.h"
#include "core/engine/strategy/strategy.h"

namespace torch::autograd {
struct Node;
}

namespace tunebench::engine {

class FsdpStrategy final : public Strategy {
 public:
  FsdpStrategy(const config::TrialConfig& config, LlamaModel& model, Communicator& comm);
  ~FsdpStrategy() override;
  std::string name() const override { return "fsdp"; }

  void begin_micro_step(bool last_micro_step) override;
  void before_unit_forward(size_t unit) override;
  const std::vector<at::Tensor>& unit_params(size_t unit) override;
  at::Tensor after_unit_forward(size_t unit, at::Tensor output) override;
  void after_backward(bool last_micro_step) override;
  std::vector<at::Tensor> optimizer_params() override;
  std::vector<at::Tensor> optimizer_grads() override;
  void after_optimizer() override;
  std::vector<at::Tensor> full_parameters() override;
  int64_t comm_bytes_per_step() const override;
  Held held_tensors() const override;

 private:
  struct Unit {
    std::string name;
    int64_t numel = 0;        // real parameters
    int64_t shard_numel = 0;  // padded numel / world
    at::Tensor shard;         // master shard (the optimizer's parameter)
    at::Tensor shard_grad;    // accumulated gradient shard, released after the optimizer
    at::Tensor full;          // gathered flat parameters (compute dtype); storage released when resharded
    std::vector<at::Tensor> params;  // leaf views of `full` the unit computes with
    at::Tensor grad_full;     // flat gradients of `params` during this unit's backward
    std::unique_ptr<CommWork> gather;
    bool gathered = false;
    size_t pending_grads = 0;
    std::unique_ptr<CommWork> reduce;
    at::Tensor reduced;       // reduce-scatter output of this micro-step
  };
  void gather(Unit& unit);       // issue the all-gather (no wait)
  void wait_gathered(Unit& unit);
  void reshard(Unit& unit);      // release the gathered storage
  void pre_backward(size_t unit);
  void on_grad_ready(size_t unit);

  const config::TrialConfig& m_config;
  LlamaModel& m_model;
  Communicator& m_comm;
  at::ScalarType m_compute_dtype;
  at::ScalarType m_reduce_dtype;
  std::vector<Unit> m_units;
  std::vector<at::Tensor> m_shards;  // the optimizer's parameters, one per unit
  std::vector<std::shared_ptr<torch::autograd::Node>> m_accumulators;
  std::recursive_mutex m_mutex;
  bool m_in_backward = false;
  bool m_first_micro_step = true;
};

}  // namespace tunebench::engine

// DDP as PyTorch does it (Li et al., VLDB 2020): gradients live in flat buckets filled in reverse
// parameter order (a small first bucket so communication starts early, then bucket_mb each);
// each parameter's .grad is a view into its bucket (no extra copy of the gradients); a
// post-accumulate hook counts the gradients of a bucket and all-reduces it as soon as it is full,
// overlapping the rest of backward. no_sync for all but the last micro-step; optional fp16/bf16
// compression; overlap off all-reduces after backward to show what overlap buys.
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

class DdpStrategy final : public Strategy {
 public:
  DdpStrategy(const config::TrialConfig& config, LlamaModel& model, Communicator& comm);
  ~DdpStrategy() override;
  std::string name() const override { return "ddp"; }

  void begin_micro_step(bool last_micro_step) override;
  const std::vector<at::Tensor>& unit_params(size_t unit) override;
  void after_backward(bool last_micro_step) override;
  std::vector<at::Tensor> optimizer_params() override;
  std::vector<at::Tensor> optimizer_grads() override;
  void after_optimizer() override;
  int64_t comm_bytes_per_step() const override;
  std::vector<at::Tensor> full_parameters() override { return m_params; }
  Held held_tensors() const override;

  // Bucket layout, for tests and the log: parameter indices (into parameters()) per bucket.
  std::vector<std::vector<size_t>> bucket_layout() const;

 private:
  struct Bucket {
    at::Tensor buffer;       // gradients of the bucket's parameters, flat
    at::Tensor compressed;   // fp16/bf16 copy that travels when compressing
    std::vector<size_t> params;
    size_t pending = 0;      // gradients still to arrive this micro-step
    bool launched = false;
    std::unique_ptr<CommWork> work;
    std::string label;
  };
  void on_grad_ready(size_t param);
  void launch_ready_buckets(bool force);  // in bucket order, so every rank issues the same sequence
  void launch(Bucket& bucket);

  const config::TrialConfig& m_config;
  LlamaModel& m_model;
  Communicator& m_comm;
  std::vector<at::Tensor> m_params;
  std::vector<size_t> m_bucket_of;  // parameter index -> bucket
  std::vector<Bucket> m_buckets;
  std::vector<std::shared_ptr<torch::autograd::Node>> m_accumulators;  // keep the hooks alive
  std::mutex m_mutex;
  size_t m_next_launch = 0;
  bool m_sync = true;
};

}  // namespace tunebench::engine

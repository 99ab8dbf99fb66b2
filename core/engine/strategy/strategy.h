// How parameters and gradients are held and communicated across ranks. The trainer runs the same
// loop for every strategy and calls these hooks at fixed points (torchtitan's "apply_*" idea:
// parallelism is applied to the model from outside, the model file knows nothing about it).
//
//   for each micro-step:  begin_micro_step -> [before_unit_forward(u), unit_params(u),
//                         after_unit_forward(u, out)] for every unit -> backward -> after_backward
//   then:                 optimizer over optimizer_params()/optimizer_grads() -> after_optimizer
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <ATen/ATen.h>

namespace tunebench::engine {

class LlamaModel;
class Timeline;

class Strategy {
 public:
  virtual ~Strategy() = default;
  virtual std::string name() const = 0;

  virtual void begin_micro_step(bool last_micro_step) { (void)last_micro_step; }
  virtual void before_unit_forward(size_t unit) { (void)unit; }
  // The parameters unit `unit` computes with (FSDP: the gathered full parameters).
  virtual const std::vector<at::Tensor>& unit_params(size_t unit) = 0;
  // Called with the unit's output; returns it (FSDP attaches its pre-backward hook here).
  virtual at::Tensor after_unit_forward(size_t unit, at::Tensor output) {
    (void)unit;
    return output;
  }
  // Called after loss.backward() of a micro-step returned (all gradient kernels are queued).
  virtual void after_backward(bool last_micro_step) { (void)last_micro_step; }

  // What the optimizer updates: the full parameters (single, DDP) or this rank's shards (FSDP).
  virtual std::vector<at::Tensor> optimizer_params() = 0;
  virtual std::vector<at::Tensor> optimizer_grads() = 0;
  virtual void after_optimizer() {}

  // The model's full parameters in unit order (FSDP gathers its shards; collective on all ranks).
  virtual std::vector<at::Tensor> full_parameters() = 0;

  // What the strategy holds beyond the optimizer's parameters and their .grad, by what it is, for
  // a memory-sampled step's categories (memory_sampler.h): reads only, no collective.
  struct Held {
    std::vector<at::Tensor> parameters;     // e.g. FSDP's gathered full parameters
    std::vector<at::Tensor> gradients;      // e.g. DDP's bucket buffers, FSDP's gradient shards
    std::vector<at::Tensor> communication;  // e.g. compressed copies, reduce-scatter outputs
  };
  virtual Held held_tensors() const { return {}; }

  // Bytes of gradients communicated per optimizer step by this rank (0 for single).
  virtual int64_t comm_bytes_per_step() const { return 0; }
};

// One rank, no communication: gradients are stolen by autograd on the first micro-step (no
// zeroing pass) and released after the optimizer, as zero_grad(set_to_none=True) does.
class SingleStrategy final : public Strategy {
 public:
  explicit SingleStrategy(LlamaModel& model) : m_model(model) {}
  // CUDA-graph capture needs gradients at fixed addresses: zero them in place instead.
  void set_keep_grads(bool keep) { m_keep_grads = keep; }
  std::string name() const override { return "single"; }
  const std::vector<at::Tensor>& unit_params(size_t unit) override;
  std::vector<at::Tensor> optimizer_params() override;
  std::vector<at::Tensor> optimizer_grads() override;
  void after_optimizer() override;
  std::vector<at::Tensor> full_parameters() override { return optimizer_params(); }

 private:
  LlamaModel& m_model;
  bool m_keep_grads = false;
};

}  // namespace tunebench::engine

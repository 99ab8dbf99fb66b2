// Autograd's post-accumulate hook, the one way the engine learns that a parameter's gradient of
// a backward is complete (DDP buckets, FSDP reduce-scatters, optimizer_overlap's updates).
#pragma once

#include <functional>
#include <memory>
#include <utility>

#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/utils/lambda_post_hook.h>
#include <torch/csrc/autograd/variable.h>

namespace tunebench::engine {

// Calls `ready` each time a backward has accumulated `param`'s gradient into .grad: once per
// backward (a parameter used twice, as a tied embedding, is summed first), as c10d::Reducer's
// hooks do. Keep the returned node alive: the variable holds its accumulator weakly, and the hook
// goes with it.
inline std::shared_ptr<torch::autograd::Node> on_gradient_accumulated(const at::Tensor& param,
                                                                      std::function<void()> ready) {
  auto accumulator = torch::autograd::impl::grad_accumulator(param);
  accumulator->add_post_hook(std::make_unique<torch::autograd::utils::LambdaPostHook>(
      [ready = std::move(ready)](const torch::autograd::variable_list& outputs, const torch::autograd::variable_list&) {
        ready();
        return outputs;
      }));
  return accumulator;
}

}  // namespace tunebench::engine

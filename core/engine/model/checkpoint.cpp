#include "core/engine/model/checkpoint.h"

#include <torch/csrc/autograd/autograd.h>
#include <torch/csrc/autograd/custom_function.h>

#include "core/engine/compat.h"

namespace tunebench::engine {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

struct CheckpointFunction : torch::autograd::Function<CheckpointFunction> {
  static at::Tensor forward(AutogradContext* ctx, at::Tensor x, int64_t body_ptr, int64_t observer_ptr) {
    ctx->save_for_backward({x});
    ctx->saved_data["body"] = body_ptr;
    ctx->saved_data["observer"] = observer_ptr;
    for (auto device : {c10::DeviceType::CUDA, c10::DeviceType::CPU}) {
      const std::string key = device == c10::DeviceType::CUDA ? "cuda" : "cpu";
      ctx->saved_data["ac_on_" + key] = compat::autocast_enabled(device);
      ctx->saved_data["ac_dt_" + key] = static_cast<int64_t>(compat::autocast_dtype(device));
    }
    const auto* body = reinterpret_cast<const UnitBody*>(body_ptr);
    return (*body)(x);  // apply() runs forward with grad mode off: nothing is kept
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    const at::Tensor x = ctx->get_saved_variables()[0];
    const at::Tensor xd = x.detach().requires_grad_(x.requires_grad());
    const auto* body = reinterpret_cast<const UnitBody*>(ctx->saved_data["body"].toInt());
    const auto* observer = reinterpret_cast<const RecomputeObserver*>(ctx->saved_data["observer"].toInt());
    at::Tensor y;
    if (observer && *observer) (*observer)(true);
    {
      at::AutoGradMode grad_on(true);
      compat::AutocastGuard cuda_ac(c10::DeviceType::CUDA, ctx->saved_data["ac_on_cuda"].toBool(),
                                    static_cast<at::ScalarType>(ctx->saved_data["ac_dt_cuda"].toInt()));
      compat::AutocastGuard cpu_ac(c10::DeviceType::CPU, ctx->saved_data["ac_on_cpu"].toBool(),
                                   static_cast<at::ScalarType>(ctx->saved_data["ac_dt_cpu"].toInt()));
      y = (*body)(xd);
    }
    if (observer && *observer) (*observer)(false);
    // Re-entrant backward through the recomputed graph: accumulates into the parameters' .grad
    // and fires their post-accumulate hooks (DDP buckets, FSDP reduce-scatter) as usual.
    torch::autograd::backward({y}, {grad_outputs[0]});
    return {xd.grad(), at::Tensor(), at::Tensor()};
  }
};

}  // namespace

at::Tensor checkpointed(const at::Tensor& x, const UnitBody* body, const RecomputeObserver* observer) {
  return CheckpointFunction::apply(x, reinterpret_cast<int64_t>(body), reinterpret_cast<int64_t>(observer));
}

}  // namespace tunebench::engine

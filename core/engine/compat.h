// The differences between the two libtorch versions we build against, in one place:
// Debian's 1.13 (CPU, Gloo; CI and developer machines) and the pip wheel's 2.11 (CUDA 13, NCCL;
// the GPU machine). docs/ARCHITECTURE.md, "libtorch 1.13 and 2.11", has the evidence for each shim.
// Everything CUDA-specific is behind TUNEBENCH_WITH_CUDA, which CMake defines only when the
// libtorch found has CUDA.
#pragma once

#include <cmath>
#include <optional>
#include <string>

#include <ATen/ATen.h>
#include <ATen/Context.h>
#include <ATen/autocast_mode.h>
#include <torch/version.h>

#include <type_traits>
#include <utility>

#define TUNEBENCH_TORCH_AT_LEAST(major, minor) \
  (TORCH_VERSION_MAJOR > (major) || (TORCH_VERSION_MAJOR == (major) && TORCH_VERSION_MINOR >= (minor)))

namespace tunebench::engine::compat {

// ---- autocast -------------------------------------------------------------------------------

inline void set_autocast(c10::DeviceType device, bool enabled, at::ScalarType dtype) {
#if TUNEBENCH_TORCH_AT_LEAST(2, 4)
  at::autocast::set_autocast_enabled(device, enabled);
  at::autocast::set_autocast_dtype(device, dtype);
#else
  if (device == c10::DeviceType::CUDA) {
    at::autocast::set_enabled(enabled);
    at::autocast::set_autocast_gpu_dtype(dtype);
  } else {
    at::autocast::set_cpu_enabled(enabled);
    at::autocast::set_autocast_cpu_dtype(dtype);
  }
#endif
}

inline bool autocast_enabled(c10::DeviceType device) {
#if TUNEBENCH_TORCH_AT_LEAST(2, 4)
  return at::autocast::is_autocast_enabled(device);
#else
  return device == c10::DeviceType::CUDA ? at::autocast::is_enabled() : at::autocast::is_cpu_enabled();
#endif
}

inline at::ScalarType autocast_dtype(c10::DeviceType device) {
#if TUNEBENCH_TORCH_AT_LEAST(2, 4)
  return at::autocast::get_autocast_dtype(device);
#else
  return device == c10::DeviceType::CUDA ? at::autocast::get_autocast_gpu_dtype()
                                         : at::autocast::get_autocast_cpu_dtype();
#endif
}

// What Python's `with torch.autocast(...)` does on enter and exit; libtorch has no RAII guard.
// Autocast state is thread-local: leave the region before backward().
class AutocastGuard {
 public:
  AutocastGuard(c10::DeviceType device, bool enabled, at::ScalarType dtype)
      : m_device(device), m_prev_enabled(autocast_enabled(device)), m_prev_dtype(autocast_dtype(device)) {
    set_autocast(device, enabled, dtype);
    at::autocast::increment_nesting();
  }
  ~AutocastGuard() {
    if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
    set_autocast(m_device, m_prev_enabled, m_prev_dtype);
  }
  AutocastGuard(const AutocastGuard&) = delete;
  AutocastGuard& operator=(const AutocastGuard&) = delete;

 private:
  c10::DeviceType m_device;
  bool m_prev_enabled;
  at::ScalarType m_prev_dtype;
};

// ---- attention ------------------------------------------------------------------------------

#if TORCH_VERSION_MAJOR >= 2
// SDPA's scale argument: none (its own 1/sqrt(hd)) for 0.
inline std::optional<double> sdpa_scale(double scale) {
  return scale > 0 ? std::optional<double>(scale) : std::nullopt;
}
#endif

// Causal scaled-dot-product attention over [B, H, T, hd] queries and [B, KV, T, hd] keys and
// values, KV dividing H (grouped-query attention: query head h reads key/value head h / (H / KV),
// as SDPA's enable_gqa and repeat_interleave both mean). `scale` defaults to 1/sqrt(hd); padded
// heads pass the real head size's (a plain double, 0 for the default: GCC's -Wmaybe-uninitialized
// misfires on an std::optional<double> passed by value). Flash, cuDNN or the memory-efficient kernel
// on 2.x (select_attention), the math on the CPU and on 1.13.
inline at::Tensor causal_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                   double scale = 0.0) {
  const int64_t group = q.size(1) / k.size(1);
#if TUNEBENCH_TORCH_AT_LEAST(2, 5)
  return at::scaled_dot_product_attention(q, k, v, {}, 0.0, /*is_causal=*/true, sdpa_scale(scale),
                                          /*enable_gqa=*/group > 1);
#else
  const at::Tensor kr = group > 1 ? k.repeat_interleave(group, 1) : k;
  const at::Tensor vr = group > 1 ? v.repeat_interleave(group, 1) : v;
#if TORCH_VERSION_MAJOR >= 2
  return at::scaled_dot_product_attention(q, kr, vr, {}, 0.0, /*is_causal=*/true, sdpa_scale(scale));
#else
  // 1.13 takes no scale: fold a non-default one into q.
  const double natural = 1.0 / std::sqrt(static_cast<double>(q.size(-1)));
  const at::Tensor qs = scale > 0 && scale != natural ? q * (scale / natural) : q;
  return std::get<0>(at::_scaled_dot_product_attention(qs, kr, vr, {}, 0.0, false, /*is_causal=*/true));
#endif
#endif
}

// Which SDPA kernels may run: exactly one of flash / cudnn / efficient, or math alone. PyTorch's
// switches are process-wide; the worker runs one model. 1.13 (the CPU) has only the math.
enum class SdpaKernel { Math, Flash, Cudnn, Efficient };

inline void select_attention(SdpaKernel kernel) {
#if TUNEBENCH_TORCH_AT_LEAST(2, 4)
  auto& ctx = at::globalContext();
  ctx.setSDPUseFlash(kernel == SdpaKernel::Flash);
  ctx.setSDPUseCuDNN(kernel == SdpaKernel::Cudnn);
  ctx.setSDPUseMemEfficient(kernel == SdpaKernel::Efficient);
  ctx.setSDPUseMath(kernel == SdpaKernel::Math);
#else
  (void)kernel;
#endif
}

// Every kernel allowed again, PyTorch's own priority deciding (its default).
inline void allow_every_attention_kernel() {
#if TUNEBENCH_TORCH_AT_LEAST(2, 4)
  auto& ctx = at::globalContext();
  ctx.setSDPUseFlash(true);
  ctx.setSDPUseCuDNN(true);
  ctx.setSDPUseMemEfficient(true);
  ctx.setSDPUseMath(true);
#endif
}

// The kernel SDPA picks for these inputs under the current switches ("flash", "cudnn",
// "efficient", "math", "none" when nothing can run them); "math" where libtorch cannot say (1.13).
inline std::string attention_in_use(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                    std::optional<double> scale = std::nullopt) {
#if TUNEBENCH_TORCH_AT_LEAST(2, 5)
  const int64_t choice =
      at::_fused_sdp_choice(q, k, v, {}, 0.0, /*is_causal=*/true, scale, /*enable_gqa=*/q.size(1) != k.size(1));
  switch (choice) {
    case 0: return "math";
    case 1: return "flash";
    case 2: return "efficient";
    case 3: return "cudnn";
    case -1: return "none";
    default: return "backend " + std::to_string(choice);
  }
#else
  (void)q, (void)k, (void)v, (void)scale;
  return "math";
#endif
}

// ---- profiler events (Kineto) ---------------------------------------------------------------

// torch::autograd::profiler::KinetoEvent's times: startUs()/durationUs() in 1.13, startNs()/endNs()
// from 2.1 on (startUs is gone in 2.11). Detected, not versioned: a template on the event type, so
// this header needs no profiler include.
template <class E, class = void>
struct has_start_ns : std::false_type {};
template <class E>
struct has_start_ns<E, std::void_t<decltype(std::declval<const E&>().startNs())>> : std::true_type {};

template <class E>
int64_t event_start_ns(const E& e) {
  if constexpr (has_start_ns<E>::value)
    return static_cast<int64_t>(e.startNs());
  else
    return static_cast<int64_t>(e.startUs()) * 1000;
}

template <class E>
int64_t event_end_ns(const E& e) {
  if constexpr (has_start_ns<E>::value)
    return static_cast<int64_t>(e.endNs());
  else
    return static_cast<int64_t>(e.startUs() + e.durationUs()) * 1000;
}

// ---- version strings ------------------------------------------------------------------------

inline std::string torch_version() {
  return std::to_string(TORCH_VERSION_MAJOR) + "." + std::to_string(TORCH_VERSION_MINOR) + "." +
         std::to_string(TORCH_VERSION_PATCH);
}

}  // namespace tunebench::engine::compat

// The differences between the two libtorch versions we build against, in one place:
// Debian's 1.13 (CPU, Gloo; CI and developer machines) and the pip wheel's 2.11 (CUDA 13, NCCL;
// the GPU machine). ../shared/libtorch-notes.md has the evidence for each shim.
// Everything CUDA-specific is behind TUNEBENCH_WITH_CUDA, which CMake defines only when the
// libtorch found has CUDA.
#pragma once

#include <ATen/ATen.h>
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

// Causal scaled-dot-product attention over [B, H, T, hd] tensors (flash/efficient kernels on 2.x).
inline at::Tensor causal_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v) {
#if TORCH_VERSION_MAJOR >= 2
  return at::scaled_dot_product_attention(q, k, v, {}, 0.0, /*is_causal=*/true);
#else
  return std::get<0>(at::_scaled_dot_product_attention(q, k, v, {}, 0.0, false, /*is_causal=*/true));
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

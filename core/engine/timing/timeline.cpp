#include "core/engine/timing/timeline.h"

#include <algorithm>

#ifdef TUNEBENCH_WITH_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <cuda_runtime_api.h>
#endif

namespace tunebench::engine {

using protocol::Interval;
using protocol::Lane;
using protocol::Phase;

// A growing pool of CUDA events, reused across steps (creating events is not free).
struct Timeline::CudaEvents {
#ifdef TUNEBENCH_WITH_CUDA
  std::vector<cudaEvent_t> pool;
  size_t used = 0;
  cudaEvent_t reference = nullptr;
  CudaEvents() { cudaEventCreate(&reference); }
  ~CudaEvents() {
    for (auto e : pool) cudaEventDestroy(e);
    if (reference) cudaEventDestroy(reference);
  }
  int record(void* stream) {
    if (used == pool.size()) {
      cudaEvent_t e;
      cudaEventCreate(&e);
      pool.push_back(e);
    }
    auto s = stream ? static_cast<cudaStream_t>(stream) : at::cuda::getCurrentCUDAStream().stream();
    cudaEventRecord(pool[used], s);
    return static_cast<int>(used++);
  }
  // Microseconds from event `slot` to the reference event (positive: the slot came first).
  int64_t before_reference_us(int slot) const {
    float ms = 0.f;
    if (cudaEventElapsedTime(&ms, pool[static_cast<size_t>(slot)], reference) != cudaSuccess) return 0;
    return static_cast<int64_t>(ms * 1000.0f);
  }
#else
  int record(void*) { return -1; }
  int64_t before_reference_us(int) const { return 0; }
  size_t used = 0;
#endif
};

Timeline::Timeline(bool device_events, bool enabled)
    : m_device_events(device_events), m_enabled(enabled),
      m_cuda(device_events ? std::make_unique<CudaEvents>() : nullptr) {}

Timeline::~Timeline() = default;

void Timeline::add_host(Phase phase, int64_t start_us, int64_t end_us) {
  if (!m_enabled || m_paused) return;
  std::lock_guard<std::mutex> lock(m_mutex);
  m_host.push_back({Lane::Host, phase, start_us, end_us, {}, 0, 0.0});
}

int Timeline::begin(Phase phase, std::string label, int64_t bytes, void* stream) {
  if (!m_enabled || m_paused) return -1;
  std::lock_guard<std::mutex> lock(m_mutex);
  Open o{phase, std::move(label), bytes};
  o.host_begin_us = protocol::now_us();
  if (m_device_events) o.begin_event = m_cuda->record(stream);
  else o.begin_us = o.host_begin_us;
  m_open.push_back(std::move(o));
  return static_cast<int>(m_open.size() - 1);
}

void Timeline::end(int handle, void* stream) {
  if (!m_enabled || handle < 0) return;
  std::lock_guard<std::mutex> lock(m_mutex);
  Open& o = m_open.at(static_cast<size_t>(handle));
  if (m_device_events) o.end_event = m_cuda->record(stream);
  o.host_end_us = protocol::now_us();
  if (!m_device_events) o.end_us = o.host_end_us;
  o.closed = true;
}

void Timeline::mark_step_end() {
#ifdef TUNEBENCH_WITH_CUDA
  if (m_enabled && m_device_events) cudaEventRecord(m_cuda->reference, at::cuda::getCurrentCUDAStream().stream());
#endif
}

std::vector<Interval> Timeline::collect(int64_t sync_host_us) {
  std::lock_guard<std::mutex> lock(m_mutex);
  std::vector<Interval> out;
  if (!m_enabled) return out;
  out.reserve(m_open.size() + m_host.size());
  for (auto& h : m_host) out.push_back(std::move(h));
  m_host_windows.clear();
  for (auto& o : m_open) {
    if (!o.closed) continue;  // an interval still open at step end belongs to no step
    if (protocol::default_lane(o.phase) == Lane::Compute)
      m_host_windows.push_back({Lane::Compute, o.phase, o.host_begin_us, o.host_end_us, o.label, 0, 0.0});
    Interval in{protocol::default_lane(o.phase), o.phase, 0, 0, std::move(o.label), o.bytes, 0.0};
    if (m_device_events) {
      in.start_us = sync_host_us - m_cuda->before_reference_us(o.begin_event);
      in.end_us = sync_host_us - m_cuda->before_reference_us(o.end_event);
    } else {
      in.start_us = o.begin_us;
      in.end_us = o.end_us;
    }
    out.push_back(std::move(in));
  }
  m_open.clear();
  m_host.clear();
  if (m_cuda) m_cuda->used = 0;
  // On the CPU, collectives block the training thread: carve them out of the compute lane too,
  // so that the compute lane shows only computing and the exposed communication is all of it.
  out = carve_nested(std::move(out), /*carve_comm=*/!m_device_events);
  std::sort(out.begin(), out.end(), [](const Interval& a, const Interval& b) { return a.start_us < b.start_us; });
  return out;
}

std::vector<Interval> carve_nested(std::vector<Interval> intervals, bool carve_comm) {
  // Recompute runs inside backward: split the enclosing compute interval around it so that a
  // lane's intervals never overlap and backward + recompute add up to the time they took.
  std::vector<Interval> children;
  for (const auto& in : intervals)
    if ((in.lane == Lane::Compute && in.phase == Phase::Recompute) || (carve_comm && in.lane == Lane::Comm))
      children.push_back(in);
  if (children.empty()) return intervals;
  std::sort(children.begin(), children.end(), [](const Interval& a, const Interval& b) { return a.start_us < b.start_us; });
  std::vector<Interval> out;
  for (auto& in : intervals) {
    if (in.lane != Lane::Compute || in.phase == Phase::Recompute) {
      out.push_back(std::move(in));
      continue;
    }
    int64_t cursor = in.start_us;
    for (const auto& c : children) {
      if (c.end_us <= cursor || c.start_us >= in.end_us) continue;
      if (c.start_us > cursor) {
        Interval piece = in;
        piece.start_us = cursor;
        piece.end_us = c.start_us;
        out.push_back(std::move(piece));
      }
      cursor = std::max(cursor, c.end_us);
    }
    if (cursor < in.end_us) {
      in.start_us = cursor;
      out.push_back(std::move(in));
    }
  }
  return out;
}

}  // namespace tunebench::engine

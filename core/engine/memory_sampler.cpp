#include "core/engine/memory_sampler.h"

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <stdexcept>

#include "core/engine/compat.h"

#ifdef TUNEBENCH_WITH_CUDA
#include <c10/cuda/CUDACachingAllocator.h>
#endif

namespace tunebench::engine {
namespace {

#ifdef TUNEBENCH_WITH_CUDA
// The allocator's segments of `device` (1.13: a vector of SegmentInfo; 2.x: SnapshotInfo's
// segments; the same fields). A segment's blocks are listed in address order from its start, so a
// block's address is the segment's plus the sizes before it.
template <class Segments>
void convert(const Segments& segments, int device, metrics::AllocatorSnapshot& out) {
  for (const auto& seg : segments) {
    if (static_cast<int>(seg.device) != device) continue;
    metrics::AllocatorSegment s;
    s.address = static_cast<uint64_t>(seg.address);
    s.total_size = static_cast<int64_t>(seg.total_size);
    s.stream = static_cast<int64_t>(reinterpret_cast<intptr_t>(seg.stream));
    uint64_t a = s.address;
    s.blocks.reserve(seg.blocks.size());
    for (const auto& b : seg.blocks) {
      const auto state = b.allocated ? metrics::BlockState::ActiveAllocated
                         : b.active  ? metrics::BlockState::ActivePendingFree
                                     : metrics::BlockState::Inactive;
      s.blocks.push_back({a, static_cast<int64_t>(b.size), state});
      a += static_cast<uint64_t>(b.size);
    }
    out.segments.push_back(std::move(s));
  }
}
#endif

// The allocator's segments and blocks of `device` now; empty without CUDA.
metrics::AllocatorSnapshot read_segments(int device) {
  metrics::AllocatorSnapshot s;
#ifdef TUNEBENCH_WITH_CUDA
#if TUNEBENCH_TORCH_AT_LEAST(2, 0)
  convert(c10::cuda::CUDACachingAllocator::snapshot().segments, device, s);
#else
  convert(c10::cuda::CUDACachingAllocator::snapshot(), device, s);
#endif
#else
  (void)device;
#endif
  return s;
}

std::unordered_set<uint64_t> held(const metrics::AllocatorSnapshot& s) {
  std::unordered_set<uint64_t> out;
  for (const auto& seg : s.segments)
    for (const auto& b : seg.blocks)
      if (b.state == metrics::BlockState::ActiveAllocated) out.insert(b.address);
  return out;
}

std::vector<metrics::AddressRange> ranges(const std::vector<at::Tensor>& tensors) {
  std::vector<metrics::AddressRange> out;
  for (const auto& t : tensors) {
    if (!t.defined() || !t.has_storage()) continue;
    const void* data = t.storage().data_ptr().get();
    if (!data) continue;
    out.push_back({static_cast<uint64_t>(reinterpret_cast<uintptr_t>(data)), static_cast<int64_t>(t.storage().nbytes())});
  }
  return out;
}

// The process's one out-of-memory observer reaches the sampler alive now, if any.
std::mutex g_mutex;
MemorySampler* g_active = nullptr;
std::optional<OomRecord> g_oom;

constexpr size_t kOomLargestBlocks = 16;

}  // namespace

MemorySampler::MemorySampler(const DeviceContext& device, std::function<KnownTensors()> known, bool log_phases)
    : m_device(device), m_known(std::move(known)), m_log_phases(log_phases) {
#ifdef TUNEBENCH_WITH_CUDA
  m_available = device.is_cuda();
#endif
  if (!m_available) return;
  std::lock_guard<std::mutex> lock(g_mutex);
  g_active = this;
#if defined(TUNEBENCH_WITH_CUDA) && TUNEBENCH_TORCH_AT_LEAST(2, 0)
  // Called by the allocator before it throws, with its lock released (so reading its snapshot is
  // safe), on the thread that allocated. It cannot be detached: it is attached once per process.
  static std::once_flag attached;
  std::call_once(attached, [&device] {
    // The allocator gives an observer to the devices it has set up, and sets them up on the first
    // CUDA allocation: before it, attaching reaches no device (the H100's out-of-memory while the 7B
    // was built carried no allocator state). One byte on this device sets them up.
    (void)at::empty({1}, at::TensorOptions().device(device.device()).dtype(at::kByte));
    c10::cuda::CUDACachingAllocator::attachOutOfMemoryObserver(
        [](int64_t /*device*/, size_t requested, size_t total, size_t free) {
          std::lock_guard<std::mutex> guard(g_mutex);
          // The last one wins: an out-of-memory a caller recovered from (the GEMM search's) is
          // replaced by the one that ends the worker.
          if (g_active)
            g_active->on_out_of_memory(static_cast<int64_t>(requested), static_cast<int64_t>(total),
                                       static_cast<int64_t>(free));
        });
  });
#endif
}

MemorySampler::~MemorySampler() {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (g_active == this) g_active = nullptr;
}

metrics::AllocatorSnapshot MemorySampler::read(const std::string& /*phase*/) const {
  metrics::AllocatorSnapshot s = read_segments(m_device.device().index());
  const KnownTensors k = m_known ? m_known() : KnownTensors{};
  s.parameters = ranges(k.parameters);
  s.gradients = ranges(k.gradients);
  s.optimizer_state = ranges(k.optimizer_state);
  s.communication = ranges(k.communication);
  for (const uint64_t a : held(s)) {
    if (!m_live_at_step.count(a)) s.step_blocks.push_back(a);
    if (m_in_tracked_forward ? !m_live_at_forward.count(a) : m_forward_blocks.count(a) > 0)
      s.forward_blocks.push_back(a);
  }
  std::sort(s.step_blocks.begin(), s.step_blocks.end());
  std::sort(s.forward_blocks.begin(), s.forward_blocks.end());
  return s;
}

void MemorySampler::begin_step(int64_t step, bool sample, bool eager) {
  m_step = step;
  m_phase = "forward";
  m_sampling = m_available && sample && eager;
  m_taken.clear();
  m_timeline.clear();
  m_forward_blocks.clear();
  m_in_tracked_forward = false;
  // The blocks older than the step are remembered on sampled steps and on the first step (where a
  // micro-batch too large runs out of memory), so an out-of-memory record can tell them apart.
  if (m_available && eager && (m_sampling || step == 0)) {
    m_live_at_step = held(read_segments(m_device.device().index()));
    m_tracked_step = step;
  }
}

void MemorySampler::begin_forward(bool last_micro_step) {
  m_phase = "forward";
  // Every micro-step of a tracked step: a micro-batch too large runs out of memory in the first.
  if (m_tracked_step == m_step) {
    m_live_at_forward = held(read_segments(m_device.device().index()));
    m_in_tracked_forward = true;
  }
  boundary(std::nullopt, protocol::Phase::Forward, last_micro_step);
}

void MemorySampler::end_forward(bool last_micro_step) {
  m_phase = "backward";  // what runs next
  boundary(protocol::Phase::Forward, protocol::Phase::Backward, last_micro_step);
  m_in_tracked_forward = false;
  if (m_tracked_step != m_step) return;
  // Every micro-step: an out-of-memory in its backward holds its forward's blocks as activations.
  m_forward_blocks.clear();
  for (const uint64_t a : held(read_segments(m_device.device().index())))
    if (!m_live_at_forward.count(a)) m_forward_blocks.insert(a);
  if (m_sampling && last_micro_step) take("forward");
}

void MemorySampler::end_backward(bool last_micro_step) {
  boundary(protocol::Phase::Backward, std::nullopt, last_micro_step);
  if (m_sampling && last_micro_step) take("backward");
}

void MemorySampler::begin_optimizer() {
  m_phase = "optimizer";
  boundary(std::nullopt, protocol::Phase::Optimizer, true);
}

void MemorySampler::end_optimizer() { boundary(protocol::Phase::Optimizer, std::nullopt, true); }

void MemorySampler::boundary(std::optional<protocol::Phase> ended, std::optional<protocol::Phase> starts,
                             bool timeline) {
  timeline = timeline && m_sampling;
  if (!timeline && !m_log_phases) return;  // an unsampled step: nothing read, nothing reset
  const int64_t t = protocol::now_us();
  // The allocator's own counters: no synchronisation. Their peaks hold since the last boundary.
  const DeviceContext::MemoryReading r = m_device.read_memory();
  const protocol::MemoryStats& m = r.stats;
  if (ended && m_log_phases)
    m_phase_log += " " + std::string(protocol::to_string(*ended)) + " peak " + std::to_string(m.peak_bytes) +
                   " then " + std::to_string(m.allocated_bytes) + ";";
  if (timeline) {
    using protocol::MemoryPoint;
    if (ended) {
      m_timeline.push_back({*ended, MemoryPoint::Peak, std::nullopt, m.peak_bytes, r.reserved_peak_bytes});
      m_timeline.push_back({*ended, MemoryPoint::End, t, m.allocated_bytes, m.reserved_bytes});
    }
    if (starts) m_timeline.push_back({*starts, MemoryPoint::Start, t, m.allocated_bytes, m.reserved_bytes});
  }
  m_peak_carried = std::max(m_peak_carried, m.peak_bytes);
  m_device.reset_peak_memory();  // the next phase's peak is its own
}

std::vector<protocol::MemoryTimelinePoint> MemorySampler::take_timeline(int64_t step_start_us) {
  std::vector<protocol::MemoryTimelinePoint> out = std::move(m_timeline);
  m_timeline.clear();
  for (auto& p : out)
    if (p.offset_us) p.offset_us = std::max<int64_t>(0, *p.offset_us - step_start_us);
  return out;
}

std::string MemorySampler::take_phase_log() {
  std::string out = std::move(m_phase_log);
  m_phase_log.clear();
  return out;
}

void MemorySampler::set_peak_aside(const std::function<void()>& work) {
  m_peak_carried = std::max(m_peak_carried, m_device.memory().peak_bytes);
  work();
  m_device.reset_peak_memory();
}

void MemorySampler::take(const char* phase) {
  Taken t;
  t.snapshot = read(phase);
  t.counters = m_device.memory();
  t.allocated = metrics::snapshot_allocated_bytes(t.snapshot);
  t.phase = phase;
  m_taken.push_back(std::move(t));
}

std::optional<protocol::MemoryCategories> MemorySampler::finish_step() {
  m_phase = "between steps";
  if (!m_sampling || m_taken.empty()) return std::nullopt;
  m_sampling = false;
  const auto largest = std::max_element(m_taken.begin(), m_taken.end(),
                                         [](const Taken& a, const Taken& b) { return a.allocated < b.allocated; });
  try {
    protocol::MemoryCategories c = metrics::attribute_memory(largest->snapshot, largest->phase);
    m_chosen = std::move(largest->snapshot);
    m_chosen_counters = largest->counters;
    m_taken.clear();
    m_problem.clear();
    return c;
  } catch (const std::invalid_argument& e) {
    m_problem = e.what();
    m_taken.clear();
    return std::nullopt;
  }
}

void MemorySampler::on_out_of_memory(int64_t requested, int64_t total, int64_t free) {
  OomRecord r;
  r.step = m_step;
  r.requested_bytes = requested;
  r.device_total_bytes = total;
  r.device_free_bytes = free;
  try {
    r.snapshot = read(m_phase);
    if (m_tracked_step != m_step) {
      // Nothing says which blocks this step allocated: they stay unattributed.
      r.snapshot.step_blocks.clear();
      r.snapshot.forward_blocks.clear();
      r.problem = "step " + std::to_string(m_step) +
                  " was not memory-sampled: its activations and temporaries are not told apart (unattributed)";
    }
    r.categories = metrics::attribute_memory(r.snapshot, m_phase);
    r.largest_blocks = metrics::largest_held_blocks(r.snapshot, kOomLargestBlocks);
  } catch (const std::exception& e) {
    r.problem = std::string("the allocator's state could not be read: ") + e.what();
    r.categories.phase = m_phase;
  }
  g_oom = std::move(r);
}

std::optional<OomRecord> MemorySampler::take_oom_record() {
  std::lock_guard<std::mutex> lock(g_mutex);
  std::optional<OomRecord> r = std::move(g_oom);
  g_oom.reset();
  return r;
}

}  // namespace tunebench::engine

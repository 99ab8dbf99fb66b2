#include "core/engine/timing/kernel_sampler.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <unordered_map>

#include <ATen/ATen.h>
#include <ATen/record_function.h>
#include <c10/util/Exception.h>
#include <torch/csrc/autograd/profiler_kineto.h>

#ifdef TUNEBENCH_WITH_CUDA
#include <c10/cuda/CUDAFunctions.h>
#endif

#include "core/engine/compat.h"
#include "core/engine/stats.h"

namespace tunebench::engine {

namespace kp = torch::autograd::profiler;
namespace pi = torch::profiler::impl;
using protocol::Interval;
using protocol::Lane;
using protocol::Phase;

namespace {

constexpr const char* kClockScope = "tunebench::clock";

// libkineto::ActivityType, as KinetoEvent::activityType() returns it (stable since Kineto's first
// release: new kinds are appended): the device activities and the host's CUDA API calls.
constexpr uint8_t kCpuOp = 0, kUserAnnotation = 1, kGpuMemcpy = 3, kGpuMemset = 4, kKernel = 5, kCudaRuntime = 7,
                  kCudaDriver = 8;

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

bool is_nccl(const std::string& name) {
  std::string head = name.substr(0, 16);
  for (char& c : head) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return head.find("nccl") != std::string::npos;
}

pi::ProfilerConfig profiler_config() { return pi::ProfilerConfig(pi::ProfilerState::KINETO); }

std::set<pi::ActivityType> activities(bool cuda) {
  std::set<pi::ActivityType> a{pi::ActivityType::CPU};
  if (cuda) a.insert(pi::ActivityType::CUDA);
  return a;
}

// The innermost window containing t (the latest-starting one); Other when none does.
Phase phase_at(const std::vector<Interval>& windows, int64_t t) {
  const Interval* best = nullptr;
  for (const auto& w : windows)
    if (w.start_us <= t && t <= w.end_us && (!best || w.start_us >= best->start_us)) best = &w;
  return best ? best->phase : Phase::Other;
}

}  // namespace

KernelSampler::KernelSampler(bool cuda) : m_cuda(cuda) {}

KernelSampler::~KernelSampler() {
  if (m_active) {
    try {
      kp::disableProfiler();
    } catch (...) {  // nothing to report from a destructor
    }
  }
}

bool KernelSampler::begin() {
  if (!m_problem.empty()) return false;
  try {
    const auto config = profiler_config();
    kp::prepareProfiler(config, activities(m_cuda));
    kp::enableProfiler(config, activities(m_cuda));
    m_active = true;
    const int64_t before = protocol::now_us();
    { RECORD_USER_SCOPE(kClockScope); }
    m_clock_host_us = (before + protocol::now_us()) / 2;
#ifdef TUNEBENCH_WITH_CUDA
    if (m_cuda) {
      // The first op and device activity after the profiler starts pay its set-up (recorded on an
      // H200: 0.5-1.2 ms, 2-3 ms the first time, in every sampled step before its first kernel,
      // seen there as host wait). One small kernel and a synchronisation here pay it before the
      // step's clock starts; what they record falls before the step window and is dropped.
      at::empty({1}, at::TensorOptions().device(at::kCUDA).dtype(at::kFloat)).zero_();
      c10::cuda::device_synchronize();
    }
#endif
  } catch (const c10::Error& e) {
    m_problem = std::string("the profiler could not start: ") + e.what_without_backtrace();
  } catch (const std::exception& e) {
    m_problem = std::string("the profiler could not start: ") + e.what();
  }
  return m_active;
}

metrics::StepActivity KernelSampler::finish(int64_t start_us, int64_t end_us, const std::vector<Interval>& windows) {
  metrics::StepActivity out;
  out.start_us = start_us;
  out.end_us = end_us;
  if (!m_active) return out;
  m_active = false;
  std::unique_ptr<kp::ProfilerResult> result;
  try {
    result = kp::disableProfiler();
  } catch (const c10::Error& e) {
    m_problem = std::string("the profiler failed: ") + e.what_without_backtrace();
    return out;
  }
  if (!result) return out;
  const auto& events = result->events();

  // The clock: the calibration scope's profiler time against the host time read around it.
  int64_t offset_ns = 0;
  for (const auto& e : events)
    if (e.name() == kClockScope) {
      offset_ns = m_clock_host_us * 1000 - compat::event_start_ns(e);
      break;
    }
  auto host_us = [offset_ns](int64_t ns) { return (ns + offset_ns + 500) / 1000; };

  struct Device {
    metrics::DeviceActivity activity;
    uint64_t correlation;
  };
  std::vector<Device> device;
  std::unordered_map<uint64_t, int64_t> launch_us;  // correlation id -> the launch call's start
  std::vector<metrics::HostCall> syncs;
  for (const auto& e : events) {
    const uint8_t type = e.activityType();
    const int64_t start = host_us(compat::event_start_ns(e)), end = host_us(compat::event_end_ns(e));
    if (e.deviceType() == c10::DeviceType::CUDA && (type == kKernel || type == kGpuMemcpy || type == kGpuMemset)) {
      const std::string name = e.name();
      metrics::DeviceActivity a;
      a.start_us = start;
      a.end_us = end;
      if (type == kKernel && is_nccl(name))
        a.lane = Lane::Comm;
      else if (type == kGpuMemcpy && starts_with(name, "Memcpy HtoD"))
        a.lane = Lane::Host;
      device.push_back({a, e.correlationId()});
    } else if (type == kCudaRuntime || type == kCudaDriver) {
      launch_us.emplace(e.correlationId(), start);
      const std::string name = e.name();
      if (metrics::is_sync_call(name)) syncs.push_back({start, end, static_cast<int64_t>(e.startThreadId()), name});
    } else if (type == kCpuOp || type == kUserAnnotation) {  // not Kineto's own spans
      const std::string name = e.name();
      if (!starts_with(name, "tunebench::"))
        out.host_ops.push_back({start, end, static_cast<int64_t>(e.startThreadId()), name});
    }
  }
  if (device.empty() && m_cuda) {
    m_problem =
        "this libtorch's profiler recorded no GPU activity (built without Kineto or CUPTI), so GPU busy is unknown";
    return out;
  }

  // A synchronisation is named after the innermost op of its thread around it.
  for (auto& s : syncs) {
    const metrics::HostCall* inner = nullptr;
    for (const auto& op : out.host_ops)
      if (op.tid == s.tid && op.start_us <= s.start_us && op.end_us >= s.end_us &&
          (!inner || op.start_us >= inner->start_us))
        inner = &op;
    s.name = inner ? metrics::describe_sync_op(inner->name) : s.name + " (the step's own synchronisation)";
  }
  out.syncs = std::move(syncs);
  for (auto& d : device) {
    const auto it = launch_us.find(d.correlation);
    if (it != launch_us.end()) d.activity.launch_us = it->second;
    if (d.activity.lane == Lane::Compute)
      d.activity.phase = phase_at(windows, d.activity.launch_us >= 0 ? d.activity.launch_us : d.activity.start_us);
    out.activities.push_back(d.activity);
  }
  return out;
}

void KernelSampler::apply(protocol::Step& step, metrics::StepActivity activity, int world_size) {
  const metrics::GpuActivitySummary summary = metrics::summarise_gpu_activity(std::move(activity));
  // The compute lane is rebuilt from the kernels; host (data wait, copies issued) and comm (the
  // collectives' CUDA events, with their bytes) stay as measured.
  auto& in = step.intervals;
  in.erase(std::remove_if(in.begin(), in.end(), [](const Interval& i) { return i.lane == Lane::Compute; }), in.end());
  in.insert(in.end(), summary.intervals.begin(), summary.intervals.end());
  std::sort(in.begin(), in.end(), [](const Interval& a, const Interval& b) { return a.start_us < b.start_us; });
  step.gpu_sampled = true;
  step.gpu_busy_ms = static_cast<double>(summary.busy_us) / 1000.0;
  summarise_comm(step, world_size);
}

}  // namespace tunebench::engine

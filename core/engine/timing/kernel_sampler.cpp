#include "core/engine/timing/kernel_sampler.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <tuple>
#include <set>
#include <unordered_map>
#include <utility>

#include <ATen/ATen.h>
#include <ATen/record_function.h>
#include <c10/util/Exception.h>
#include <torch/csrc/autograd/profiler_kineto.h>

#ifdef TUNEBENCH_WITH_CUDA
#include <c10/cuda/CUDAFunctions.h>
#endif
#ifdef TUNEBENCH_WITH_CUPTI
#include "core/rules/thresholds.h"
#include "core/engine/timing/cupti_activity.h"
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

#ifdef TUNEBENCH_WITH_CUPTI
constexpr bool kOwnCupti = true;  // device records from cupti_activity.h, host ops from Kineto
#else
constexpr bool kOwnCupti = false;  // both from Kineto
#endif

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

#ifdef TUNEBENCH_WITH_CUPTI
// One reading of the host clock and CUPTI's, taken together.
std::pair<int64_t, int64_t> cupti_clock_reading() {
  const int64_t before = protocol::now_ns();
  const int64_t t = cupti::timestamp_ns();
  return {(before + protocol::now_ns()) / 2, t};
}
#endif

}  // namespace

std::string KernelSampler::source() const {
  return m_own_cupti ? "CUPTI, detached after a host-bound sample; host ops from Kineto" : "Kineto";
}

KernelSampler::KernelSampler(bool cuda, bool cuda_graphs, std::string dump_path)
    : m_cuda(cuda), m_own_cupti(cuda && kOwnCupti && !cuda_graphs), m_dump_path(std::move(dump_path)) {}

KernelSampler::~KernelSampler() {
  if (m_active) {
    try {
      kp::disableProfiler();
    } catch (...) {  // nothing to report from a destructor
    }
  }
}

int64_t KernelSampler::clock_offset_ns(const std::vector<std::pair<int64_t, int64_t>>& brackets,
                                       const std::vector<std::pair<int64_t, int64_t>>& scopes) {
  const size_t n = std::min(brackets.size(), scopes.size());
  if (n == 0) return 0;
  size_t best = 0;
  for (size_t i = 1; i < n; ++i)
    if (brackets[i].second - brackets[i].first < brackets[best].second - brackets[best].first) best = i;
  const auto mid = [](const std::pair<int64_t, int64_t>& p) { return p.first + (p.second - p.first) / 2; };
  return mid(brackets[best]) - mid(scopes[best]);
}

bool KernelSampler::begin() {
  if (!m_problem.empty()) return false;
  try {
    const auto config = profiler_config();
    // With CUPTI at hand, Kineto records only the host's ops: its CUDA part would leave CUPTI
    // attached to the process after the first sample (kernel_sampler.h).
    const auto kinds = activities(m_cuda && !m_own_cupti);
    kp::prepareProfiler(config, kinds);
    kp::enableProfiler(config, kinds);
    m_active = true;
    // Several calibration scopes, each bracketed by host readings; finish() keeps the tightest
    // bracket. One alone was off by 0.3 ms when the thread lost its core inside the bracket (CI,
    // ctest -j2 on two cores), which moved every host op of the sample by that much.
    for (auto& bracket : m_clock_brackets) {
      bracket.first = protocol::now_ns();
      { RECORD_USER_SCOPE(kClockScope); }
      bracket.second = protocol::now_ns();
    }
#ifdef TUNEBENCH_WITH_CUDA
    if (m_cuda) {
#ifdef TUNEBENCH_WITH_CUPTI
      std::string error;
      if (m_own_cupti && !cupti::start(&error)) {
        m_problem = error;
        kp::disableProfiler();
        m_active = false;
        return false;
      }
      std::tie(m_cupti_host0_ns, m_cupti_t0) = cupti_clock_reading();
#endif
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
  std::vector<Raw> raw;
#ifdef TUNEBENCH_WITH_CUPTI
  if (m_own_cupti) {
    const auto [host1_ns, t1] = cupti_clock_reading();
    const double scale =
        t1 > m_cupti_t0 ? static_cast<double>(host1_ns - m_cupti_host0_ns) / static_cast<double>(t1 - m_cupti_t0) : 1.0;
    const auto us = [this, scale](int64_t t) {
      return static_cast<int64_t>(std::llround(
          (static_cast<double>(m_cupti_host0_ns) + static_cast<double>(t - m_cupti_t0) * scale) / 1000.0));
    };
    std::string error;
    for (auto& r : cupti::stop(&error)) {
      const Raw::Kind kind = r.kind == cupti::Kind::Kernel   ? Raw::Kernel
                             : r.kind == cupti::Kind::Memcpy ? Raw::Memcpy
                             : r.kind == cupti::Kind::Memset ? Raw::Memset
                                                             : Raw::Api;
      raw.push_back({kind, us(r.start_ns), us(r.end_ns), r.correlation, static_cast<int64_t>(r.thread_id),
                     std::move(r.name)});
    }
    if (!error.empty()) m_problem = error;
  }
#endif
  std::unique_ptr<kp::ProfilerResult> result;
  try {
    result = kp::disableProfiler();
  } catch (const c10::Error& e) {
    m_problem = std::string("the profiler failed: ") + e.what_without_backtrace();
    return out;
  }
  if (!result) return out;
  if (!m_problem.empty()) return out;
  const auto& events = result->events();

  // The clock: the calibration scopes' profiler times against the host times read around them,
  // from the scope whose host bracket is the narrowest.
  std::vector<std::pair<int64_t, int64_t>> scopes;  // profiler start, end
  for (const auto& e : events)
    if (e.name() == kClockScope) scopes.emplace_back(compat::event_start_ns(e), compat::event_end_ns(e));
  std::sort(scopes.begin(), scopes.end());
  const int64_t offset_ns = clock_offset_ns(m_clock_brackets, scopes);
  auto host_us = [offset_ns](int64_t ns) { return (ns + offset_ns + 500) / 1000; };
  for (const auto& e : events) {
    const uint8_t type = e.activityType();
    Raw r{Raw::CpuOp, host_us(compat::event_start_ns(e)), host_us(compat::event_end_ns(e)), e.correlationId(),
          static_cast<int64_t>(e.startThreadId()), {}};
    if (e.deviceType() == c10::DeviceType::CUDA && (type == kKernel || type == kGpuMemcpy || type == kGpuMemset))
      r.kind = type == kKernel ? Raw::Kernel : type == kGpuMemcpy ? Raw::Memcpy : Raw::Memset;
    else if (type == kCudaRuntime || type == kCudaDriver)
      r.kind = Raw::Api;
    else if (type != kCpuOp && type != kUserAnnotation)
      continue;
    r.name = e.name();
    raw.push_back(std::move(r));
  }
  out = classify(std::move(raw), std::move(out), windows);
#ifdef TUNEBENCH_WITH_CUPTI
  // Host-bound: the launches between samples would pay for an attached CUPTI (kernel_sampler.h).
  if (m_own_cupti && m_problem.empty() && end_us > start_us) {
    const auto busy = static_cast<double>(metrics::summarise_gpu_activity(out).busy_us);
    if (1.0 - busy / static_cast<double>(end_us - start_us) >= rules::kIdleShare) {
      std::string error;
      cupti::detach(&error);
      if (!error.empty()) m_problem = error;
    }
  }
#endif
  return out;
}

// TUNEBENCH_SAMPLER_DUMP=FILE (a diagnostic, Switches::sampler_dump): the records and windows of
// each sampled step, one JSON object per line, appended.
void KernelSampler::dump(const char* path, const std::vector<Raw>& raw, const metrics::StepActivity& step,
                         const std::vector<Interval>& windows) {
  std::FILE* f = std::fopen(path, "a");
  if (!f) return;
  std::fprintf(f, "{\"start\":%lld,\"end\":%lld,\"windows\":[", static_cast<long long>(step.start_us),
               static_cast<long long>(step.end_us));
  for (size_t i = 0; i < windows.size(); ++i)
    std::fprintf(f, "%s[%d,%lld,%lld]", i ? "," : "", static_cast<int>(windows[i].phase),
                 static_cast<long long>(windows[i].start_us), static_cast<long long>(windows[i].end_us));
  std::fprintf(f, "],\"raw\":[");
  for (size_t i = 0; i < raw.size(); ++i) {
    std::string name = raw[i].name.substr(0, 160);  // past a namespace's mangled prefix
    for (char& c : name)
      if (c == '"' || c == '\\') c = ' ';
    std::fprintf(f, "%s[%d,%lld,%lld,%llu,%lld,\"%s\"]", i ? "," : "", static_cast<int>(raw[i].kind),
                 static_cast<long long>(raw[i].start_us), static_cast<long long>(raw[i].end_us),
                 static_cast<unsigned long long>(raw[i].correlation), static_cast<long long>(raw[i].tid), name.c_str());
  }
  std::fprintf(f, "]}\n");
  std::fclose(f);
}

metrics::StepActivity KernelSampler::classify(std::vector<Raw> raw, metrics::StepActivity out,
                                              const std::vector<Interval>& windows) {
  if (!m_dump_path.empty()) dump(m_dump_path.c_str(), raw, out, windows);
  struct Device {
    metrics::DeviceActivity activity;
    uint64_t correlation;
  };
  std::vector<Device> device;
  std::unordered_map<uint64_t, std::pair<int64_t, int64_t>> launch_us;  // correlation id -> the launch call
  std::vector<metrics::HostCall> syncs;
  for (auto& e : raw) {
    switch (e.kind) {
      case Raw::Kernel:
      case Raw::Memcpy:
      case Raw::Memset: {
        metrics::DeviceActivity a;
        a.start_us = e.start_us;
        a.end_us = e.end_us;
        if (e.kind == Raw::Kernel && is_nccl(e.name))
          a.lane = Lane::Comm;
        else if (e.kind == Raw::Memcpy && starts_with(e.name, "Memcpy HtoD"))
          a.lane = Lane::Host;
        device.push_back({a, e.correlation});
        break;
      }
      case Raw::Api:
        launch_us.emplace(e.correlation, std::make_pair(e.start_us, e.end_us));
        if (metrics::is_sync_call(e.name)) syncs.push_back({e.start_us, e.end_us, e.tid, e.name});
        break;
      case Raw::CpuOp:  // not Kineto's own spans
        if (!starts_with(e.name, "tunebench::")) out.host_ops.push_back({e.start_us, e.end_us, e.tid, std::move(e.name)});
        break;
    }
  }
  if (device.empty() && m_cuda) {
    m_problem =
        "this libtorch's profiler recorded no GPU activity (built without Kineto or CUPTI), so GPU busy is unknown";
    return out;
  }

  // A synchronisation is named after the innermost op around it on its thread; the host ops and
  // the CUDA calls may number threads differently (Kineto's ids, CUPTI's system ids), so when no
  // op of that thread holds it, after the innermost op of any thread that does.
  auto innermost = [&out](const metrics::HostCall& s, bool same_thread) {
    const metrics::HostCall* inner = nullptr;
    for (const auto& op : out.host_ops)
      if ((!same_thread || op.tid == s.tid) && op.start_us <= s.start_us && op.end_us >= s.end_us &&
          (!inner || op.start_us >= inner->start_us))
        inner = &op;
    return inner;
  };
  for (auto& s : syncs) {
    const metrics::HostCall* inner = innermost(s, true);
    if (!inner) inner = innermost(s, false);
    s.name = inner ? metrics::describe_sync_op(inner->name) : s.name + " (the step's own synchronisation)";
  }
  out.syncs = std::move(syncs);
  for (auto& d : device) {
    const auto it = launch_us.find(d.correlation);
    if (it != launch_us.end()) std::tie(d.activity.launch_us, d.activity.launch_end_us) = it->second;
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

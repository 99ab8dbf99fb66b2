#include "core/launch/kernel_traces.h"

#include <algorithm>
#include <exception>
#include <filesystem>
#include <utility>
#include <vector>

#include "core/import/torch_trace_reader.h"
#include "core/metrics/exposed_comm.h"

namespace tunebench::launch {

using protocol::Interval;
using protocol::Lane;

double busy_ms_in_window(const protocol::Step& sampled, int64_t start_us, int64_t end_us, double step_ms) {
  // The trace's step is idle exactly where its compute lane holds a GPU-idle gap (the import
  // covers every instant no activity covers with one), so the busy time of any part of it is that
  // part less its gaps.
  const int64_t from = std::max(start_us, sampled.start_us), to = std::min(end_us, sampled.end_us);
  if (to <= from) return 0.0;
  int64_t idle = 0;
  for (const Interval& in : sampled.intervals)
    if (in.lane == Lane::Compute && protocol::is_gpu_idle(in.phase))
      idle += std::max<int64_t>(0, std::min(in.end_us, to) - std::max(in.start_us, from));
  const double fraction = static_cast<double>(to - from - idle) / static_cast<double>(to - from);
  return std::clamp(fraction, 0.0, 1.0) * step_ms;
}

void fold_kernel_sample(protocol::Step& step, const protocol::Step& sampled) {
  std::vector<Interval> lanes[3];  // host, compute, comm: the event's order
  auto slot = [](Lane lane) { return lane == Lane::Host ? 0 : lane == Lane::Compute ? 1 : 2; };
  for (Interval& in : step.intervals)
    if (in.lane != Lane::Compute) lanes[slot(in.lane)].push_back(std::move(in));
  for (const Interval& in : sampled.intervals) {
    if (in.lane != Lane::Compute) continue;  // the probe's host and comm lanes stay
    Interval clipped = in;
    clipped.start_us = std::max(clipped.start_us, step.start_us);
    clipped.end_us = std::min(clipped.end_us, step.end_us);
    if (clipped.end_us > clipped.start_us) lanes[1].push_back(std::move(clipped));
  }
  step.intervals.clear();
  for (auto& lane : lanes) {
    std::sort(lane.begin(), lane.end(), [](const Interval& a, const Interval& b) { return a.start_us < b.start_us; });
    for (Interval& in : lane) step.intervals.push_back(std::move(in));
  }
  step.gpu_sampled = true;
  step.gpu_busy_ms = busy_ms_in_window(sampled, step.start_us, step.end_us, step.step_ms);
  step.exposed_comm_ms = static_cast<double>(metrics::exposed_comm_us(step.intervals)) / 1000.0;
}

KernelTraces::~KernelTraces() {
  for (auto& [rank, trace] : m_last) done_with(trace);
}

void KernelTraces::done_with(Trace& trace) {
  if (!trace.path.empty() && !m_own_dir.empty() &&
      std::filesystem::path(trace.path).parent_path() == std::filesystem::path(m_own_dir)) {
    std::error_code ignored;  // already gone, or never written: nothing to keep either way
    std::filesystem::remove(trace.path, ignored);
  }
  trace = Trace{};
}

const KernelTraces::Trace& KernelTraces::read(int rank, const std::string& path) {
  Trace& t = m_last[rank];
  if (t.path == path) return t;
  done_with(t);
  t = Trace{path, {}, {}};
  try {
    import::RankTrace trace = import::read_torch_trace(path);
    for (protocol::Step& s : trace.steps) t.steps.emplace(s.step, std::move(s));
  } catch (const std::exception& e) {  // import::TraceError: the file, its content or a cancel
    t.error = e.what();
  }
  return t;
}

std::optional<protocol::Event> KernelTraces::apply(protocol::Event& event) {
  const int rank = event.header.rank;
  if (event.is<protocol::Hello>()) m_device[rank] = event.as<protocol::Hello>().device_kind;
  if (!event.is<protocol::Step>()) return std::nullopt;
  if (event.as<protocol::Step>().kernel_trace.empty()) {
    if (const auto it = m_last.find(rank); it != m_last.end()) done_with(it->second);  // the window is over
    return std::nullopt;
  }
  protocol::Step& step = event.as<protocol::Step>();
  const std::string path = std::move(step.kernel_trace);
  step.kernel_trace.clear();
  const Trace& trace = read(rank, path);
  std::string why = trace.error;
  if (why.empty()) {
    const auto it = trace.steps.find(step.step);
    if (it != trace.steps.end()) {
      fold_kernel_sample(step, it->second);
      return std::nullopt;
    }
    why = import::file_name(path) + " holds no ProfilerStep#" + std::to_string(step.step);
  }
  if (!m_warned.insert(rank).second) return std::nullopt;
  protocol::Warning w;
  w.kind = "kernel-sampling";
  if (m_device[rank] == "cpu")
    w.message = "kernel sampling on the CPU: step " + std::to_string(step.step) +
                " and the other sampled steps ran under torch.profiler, but a CPU run has no GPU kernels, so GPU "
                "busy and GPU idle (host wait, launch gaps, syncs) are unavailable; those steps keep the probe's "
                "own phases (the trace import: " + why + ")";
  else
    w.message = "kernel sampling: the trace of step " + std::to_string(step.step) + " could not be used (" + why +
                "); the sampled steps keep the probe's own phases and GPU busy is unavailable";
  protocol::Event out;
  out.header = event.header;
  out.payload = std::move(w);
  return out;
}

}  // namespace tunebench::launch

#include "core/metrics/gpu_activity.h"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <map>
#include <queue>

#include "core/metrics/spans.h"

namespace tunebench::metrics {

using protocol::Interval;
using protocol::Lane;
using protocol::Phase;

namespace {

// The outermost ops of each thread, sorted by start: an op inside another op of its thread is
// dropped. Ops of one thread then never overlap.
std::map<int64_t, std::vector<HostCall>> outermost_by_thread(std::vector<HostCall> ops) {
  std::sort(ops.begin(), ops.end(), [](const HostCall& a, const HostCall& b) {
    return a.tid != b.tid ? a.tid < b.tid : a.start_us != b.start_us ? a.start_us < b.start_us : a.end_us > b.end_us;
  });
  std::map<int64_t, std::vector<HostCall>> out;
  for (auto& op : ops) {
    if (op.end_us <= op.start_us) continue;
    auto& list = out[op.tid];
    if (!list.empty() && op.start_us < list.back().end_us) continue;  // nested (or overlapping): inside
    list.push_back(std::move(op));
  }
  return out;
}

// The op name overlapping [a, b) the most, over every thread; empty when none overlaps.
std::string busiest_op(const std::map<int64_t, std::vector<HostCall>>& threads, int64_t a, int64_t b) {
  const HostCall* best = nullptr;
  int64_t best_us = 0;
  for (const auto& [tid, ops] : threads) {
    auto it = std::upper_bound(ops.begin(), ops.end(), a, [](int64_t t, const HostCall& op) { return t < op.end_us; });
    for (; it != ops.end() && it->start_us < b; ++it) {
      const int64_t overlap = std::min(b, it->end_us) - std::max(a, it->start_us);
      if (overlap > best_us) best_us = overlap, best = &*it;
    }
  }
  return best ? best->name : std::string();
}

}  // namespace

int lane_priority(Phase p) {
  switch (p) {
    case Phase::Recompute:
      return 6;
    case Phase::Backward:
      return 5;
    case Phase::Forward:
      return 4;
    case Phase::Optimizer:
      return 3;
    case Phase::DataWait:
      return 2;
    case Phase::HostToDevice:
      return 1;
    default:
      return 0;
  }
}

std::vector<Interval> flatten_lane(std::vector<Interval> in) {
  std::vector<Interval> out;
  in.erase(std::remove_if(in.begin(), in.end(), [](const Interval& i) { return i.end_us <= i.start_us; }), in.end());
  if (in.empty()) return out;
  std::sort(in.begin(), in.end(), [](const Interval& a, const Interval& b) { return a.start_us < b.start_us; });
  std::vector<int64_t> cuts;
  cuts.reserve(in.size() * 2);
  for (const auto& i : in) {
    cuts.push_back(i.start_us);
    cuts.push_back(i.end_us);
  }
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  using Entry = std::pair<std::pair<int, size_t>, int64_t>;  // ((priority, index), end)
  std::priority_queue<Entry> active;
  size_t next = 0;
  size_t last_source = SIZE_MAX;
  for (size_t k = 0; k + 1 < cuts.size(); ++k) {
    const int64_t a = cuts[k], b = cuts[k + 1];
    while (next < in.size() && in[next].start_us <= a) {
      active.push({{lane_priority(in[next].phase), next}, in[next].end_us});
      ++next;
    }
    while (!active.empty() && active.top().second <= a) active.pop();
    if (active.empty()) continue;
    const size_t src = active.top().first.second;
    if (src == last_source && !out.empty() && out.back().end_us == a) {
      out.back().end_us = b;
    } else {
      Interval piece = in[src];
      piece.start_us = a;
      piece.end_us = b;
      out.push_back(std::move(piece));
      last_source = src;
    }
  }
  return out;
}

bool is_sync_call(const std::string& name) {
  static const char* const calls[] = {"cudaStreamSynchronize", "cudaDeviceSynchronize", "cudaEventSynchronize",
                                      "cudaMemcpy",            "cudaMemcpy2D",          "cuStreamSynchronize",
                                      "cuCtxSynchronize",      "cuEventSynchronize",    "cuMemcpyDtoH_v2"};
  for (const char* c : calls)
    if (name == c) return true;
  return false;
}

namespace {
std::string ms_words(int64_t us) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f ms", static_cast<double>(us) / 1000.0);
  return buf;
}
bool contains(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }
}  // namespace

std::string stream_wait_label(const StreamWait& w, int64_t gap_start_us) {
  std::string out = "cudaStreamWaitEvent: ";
  out += w.stream >= 0 ? "stream " + std::to_string(w.stream) : std::string("a stream");
  out += " waited for ";
  out += w.on_stream >= 0 ? "stream " + std::to_string(w.on_stream) : std::string("an event on another stream");
  if (w.record_us > gap_start_us)
    out += ", whose event the host recorded " + ms_words(w.record_us - gap_start_us) + " after the GPU ran dry";
  if (!w.op.empty()) out += " (in " + w.op + ")";
  return out;
}

bool is_collective_op(const std::string& name) {
  static const char* const parts[] = {"c10d::", "nccl:", "gloo:", "record_param_comms", "all_reduce", "allreduce",
                                      "all_gather", "allgather", "reduce_scatter", "broadcast_"};
  for (const char* p : parts)
    if (contains(name, p)) return true;
  return false;
}

bool is_copy_op(const std::string& name) {
  return name == "aten::copy_" || name == "aten::_to_copy" || name.rfind("cudaMemcpy", 0) == 0 ||
         name.rfind("cuMemcpy", 0) == 0 || contains(name, "(aten::copy_)") || contains(name, "(aten::_to_copy)");
}

std::string describe_sync_op(const std::string& op) {
  static const std::pair<const char*, const char*> known[] = {
      {"aten::_local_scalar_dense", ".item()"},  {"aten::item", ".item()"},
      {"aten::_to_copy", ".cpu() / .to()"},      {"aten::copy_", ".cpu() / .to() / copy_"},
      {"aten::nonzero", "nonzero (data-dependent shape)"},
      {"aten::is_nonzero", "a tensor used as a Python bool"},
      {"aten::masked_select", "masked_select (data-dependent shape)"},
      {"aten::unique", "unique (data-dependent shape)"}};
  for (const auto& [name, words] : known)
    if (op == name) return std::string(words) + " (" + op + ")";
  return op;
}

GpuActivitySummary summarise_gpu_activity(StepActivity step) {
  GpuActivitySummary out;
  const Span window{step.start_us, step.end_us};
  if (window.length_us() == 0) return out;

  auto& acts = step.activities;
  for (auto& a : acts) {
    a.start_us = std::max(a.start_us, window.start_us);
    a.end_us = std::min(a.end_us, window.end_us);
  }
  acts.erase(std::remove_if(acts.begin(), acts.end(), [](const DeviceActivity& a) { return a.end_us <= a.start_us; }),
             acts.end());
  std::sort(acts.begin(), acts.end(), [](const DeviceActivity& a, const DeviceActivity& b) {
    return a.start_us != b.start_us ? a.start_us < b.start_us : a.end_us < b.end_us;
  });

  // ---- busy: the union of every activity ------------------------------------------------------
  std::vector<Span> all;
  all.reserve(acts.size());
  for (const auto& a : acts) all.push_back({a.start_us, a.end_us});
  const std::vector<Span> busy = span_union(std::move(all));
  for (const auto& s : busy) out.busy_us += s.length_us();
  out.idle_us = window.length_us() - out.busy_us;

  // ---- compute runs by phase, host-to-device copy runs -----------------------------------------
  std::map<Phase, std::vector<Span>> by_phase;
  std::vector<Span> copies;
  for (const auto& a : acts) {
    if (a.lane == Lane::Compute) by_phase[a.phase].push_back({a.start_us, a.end_us});
    if (a.lane == Lane::Host) copies.push_back({a.start_us, a.end_us});
  }
  std::vector<Interval> compute;
  for (auto& [phase, spans] : by_phase)
    for (const auto& s : span_union(std::move(spans)))
      compute.push_back({Lane::Compute, phase, s.start_us, s.end_us, "", 0, 0.0});
  out.intervals = flatten_lane(std::move(compute));
  for (const auto& s : span_union(std::move(copies)))
    out.intervals.push_back({Lane::Host, Phase::HostToDevice, s.start_us, s.end_us, "", 0, 0.0});

  // ---- the gaps, classified --------------------------------------------------------------------
  auto& syncs = step.syncs;
  std::sort(syncs.begin(), syncs.end(), [](const HostCall& a, const HostCall& b) { return a.start_us < b.start_us; });
  const auto threads = outermost_by_thread(std::move(step.host_ops));
  auto sync_at = [&](int64_t t) -> const HostCall* {
    const HostCall* found = nullptr;
    for (const auto& s : syncs) {
      if (s.start_us > t) break;
      if (s.end_us >= t) found = &s;  // the latest-starting one in progress: the innermost
    }
    return found;
  };
  // The activity the GPU resumed with at t: the earliest launched among those starting at t.
  auto resumed_at = [&](int64_t t) -> const DeviceActivity* {
    auto it = std::lower_bound(acts.begin(), acts.end(), t,
                               [](const DeviceActivity& a, int64_t v) { return a.start_us < v; });
    const DeviceActivity* found = nullptr;
    for (; it != acts.end() && it->start_us == t; ++it)
      if (it->launch_us >= 0 && (!found || it->launch_us < found->launch_us)) found = &*it;
    return found;
  };
  auto& waits = step.stream_waits;
  std::sort(waits.begin(), waits.end(), [](const StreamWait& a, const StreamWait& b) { return a.call_us < b.call_us; });
  // What held the queued activity `next` through the gap [a, b): the latest stream wait on its
  // stream called before its launch and after the launch of the stream's previous activity; else a
  // collective or a copy the host ran in the gap; else nothing the records show ("").
  auto dependency_of = [&](const DeviceActivity& next, int64_t a, int64_t b) -> std::string {
    int64_t after_us = INT64_MIN;
    for (const auto& act : acts)
      if (&act != &next && act.stream == next.stream && act.launch_us >= 0 && act.launch_us < next.launch_us)
        after_us = std::max(after_us, act.launch_us);
    const StreamWait* found = nullptr;
    for (const auto& w : waits) {
      if (w.call_us > next.launch_us) break;
      const bool same_stream = w.stream < 0 || next.stream < 0 || w.stream == next.stream;
      if (same_stream && w.call_us >= after_us) found = &w;
    }
    if (found) return stream_wait_label(*found, a);
    for (const auto& [tid, ops] : threads)
      for (const auto& op : ops)
        if (op.start_us < b && op.end_us > a && is_collective_op(op.name)) return op.name + " (a collective)";
    for (const auto& s : syncs)
      if (s.start_us < b && s.end_us > a && is_copy_op(s.name)) return "a copy: " + s.name;
    for (const auto& [tid, ops] : threads)
      for (const auto& op : ops)
        if (op.start_us < b && op.end_us > a && is_copy_op(op.name)) return "a copy: " + op.name;
    return "";
  };
  // A gap with nothing queued: the host was in a synchronisation, or had not launched the work yet.
  auto host_side = [&](int64_t a, int64_t b, int64_t launch, bool has_next) {
    Interval gap{Lane::Compute, Phase::HostWait, a, b, "", 0, 0.0};
    if (const HostCall* s = sync_at(a)) {
      gap.phase = Phase::SyncWait;
      gap.label = s->name;
    } else if (launch < 0 && has_next && b - a <= kShortGapUs) {
      gap.phase = Phase::LaunchGap;
    } else {
      gap.label = busiest_op(threads, a, b);
    }
    return gap;
  };
  auto add_gap = [&](int64_t a, int64_t b, bool has_next) {
    if (b <= a) return;
    const DeviceActivity* next = has_next ? resumed_at(b) : nullptr;
    const int64_t launch = next ? next->launch_us : -1;
    // Queued from when its launch call returned (a launch that itself takes long, a kernel's
    // first, is the host's time, not a wait of the device).
    const int64_t queued = next ? std::max(next->launch_us, next->launch_end_us) : -1;
    // Work launched before the GPU ran dry is the device's, even while the host sits in a
    // synchronisation (a GPU-bound step's host waits in the step's own sync while the device works
    // through its queue): launch latency when it started within kLaunchLatencyUs, else something
    // held it.
    if (launch >= 0 && launch <= a) {
      Interval gap{Lane::Compute, Phase::LaunchGap, a, b, "", 0, 0.0};
      if (b - a > kLaunchLatencyUs) {
        gap.phase = Phase::DependencyWait;
        gap.label = dependency_of(*next, a, b);
      }
      out.intervals.push_back(std::move(gap));
      return;
    }
    // Launched while the GPU sat idle but started more than a launch latency after: the host's
    // part of the gap ends where the work was queued, the rest something held it.
    if (launch >= 0 && b - queued > kLaunchLatencyUs) {
      if (queued > a) out.intervals.push_back(host_side(a, queued, launch, has_next));
      out.intervals.push_back({Lane::Compute, Phase::DependencyWait, std::max(a, queued), b,
                               dependency_of(*next, std::max(a, queued), b), 0, 0.0});
      return;
    }
    out.intervals.push_back(host_side(a, b, launch, has_next));
  };
  int64_t cursor = window.start_us;
  for (const auto& s : busy) {
    add_gap(cursor, s.start_us, true);
    cursor = s.end_us;
  }
  add_gap(cursor, window.end_us, false);

  std::sort(out.intervals.begin(), out.intervals.end(),
            [](const Interval& a, const Interval& b) { return a.start_us < b.start_us; });
  return out;
}

}  // namespace tunebench::metrics

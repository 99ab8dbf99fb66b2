#include "core/analysis/collective_split.h"

#include <algorithm>
#include <map>
#include <set>

#include "core/analysis/format.h"
#include "core/analysis/phase_style.h"
#include "core/hardware/hardware.h"
#include "core/metrics/bus_bandwidth.h"

namespace tunebench::analysis {

using protocol::Interval;
using protocol::Lane;

namespace {

std::vector<const Interval*> collectives_of(const protocol::Step& s) {
  std::vector<const Interval*> out;
  for (const auto& in : s.intervals)
    if (in.lane == Lane::Comm && in.end_us > in.start_us) out.push_back(&in);
  std::sort(out.begin(), out.end(), [](const Interval* a, const Interval* b) { return a->start_us < b->start_us; });
  return out;
}

// The link between the ranks' GPUs when all are one catalogued GPU model on one host.
void find_link(const protocol::TrialLog& log, CollectiveSplit& out) {
  std::set<std::string> hosts, devices;
  std::map<std::string, std::string> env;
  for (const auto& [rank, r] : log.ranks) {
    if (!r.hello) return;
    hosts.insert(r.hello->host);
    devices.insert(r.hello->device);
    for (const auto& [k, v] : r.hello->env) env.emplace(k, v);
  }
  if (hosts.size() != 1 || devices.size() != 1) return;
  const hardware::GpuSpec* gpu = hardware::find_gpu(*devices.begin());
  if (!gpu) return;
  if (const hardware::LinkSpec* link = hardware::implied_link(*gpu, env)) {
    out.link_busbw_gbps = link->busbw_gbps;
    out.link_name = link->name;
  }
}

}  // namespace

std::optional<CollectiveSplit> collective_split(const std::vector<const protocol::TrialLog*>& repeats) {
  CollectiveSplit out;
  std::map<protocol::Phase, int64_t> kinds;
  double wait_us = 0, transfer_us = 0, bus_bytes = 0, bus_us = 0;
  std::vector<double> lateness_us;
  int world_seen = 0;
  for (const protocol::TrialLog* log : repeats) {
    const int world = log->world_size();
    if (world < 2 || log->ranks.size() < 2) continue;
    if (out.last_counts.size() < static_cast<size_t>(world)) {
      out.last_counts.resize(static_cast<size_t>(world), 0);
      lateness_us.resize(static_cast<size_t>(world), 0.0);
    }
    world_seen = std::max(world_seen, world);
    std::map<int, int64_t> offset;
    for (const auto& [rank, r] : log->ranks) offset[rank] = r.hello ? r.hello->clock_offset_us : 0;
    std::map<int64_t, std::map<int, const protocol::Step*>> by_step;
    for (const auto& [rank, r] : log->ranks)
      for (const protocol::Step* s : log->measured_steps(rank)) by_step[s->step][rank] = s;
    for (const auto& [index, ranks] : by_step) {
      if (ranks.size() != log->ranks.size()) continue;
      std::map<int, std::vector<const Interval*>> lists;
      size_t n = SIZE_MAX;
      bool same = true;
      for (const auto& [rank, s] : ranks) {
        lists[rank] = collectives_of(*s);
        if (n == SIZE_MAX) n = lists[rank].size();
        same = same && lists[rank].size() == n;
      }
      for (size_t k = 0; same && k < n; ++k)
        for (const auto& [rank, list] : lists) same = same && list[k]->phase == lists.begin()->second[k]->phase;
      if (n == 0 || n == SIZE_MAX) continue;
      if (!same) {
        ++out.unmatched_steps;
        continue;
      }
      ++out.steps;
      for (size_t k = 0; k < n; ++k) {
        int last = -1;
        int64_t last_arrival = INT64_MIN, first_arrival = INT64_MAX, first_end = INT64_MAX, bytes = 0;
        for (const auto& [rank, list] : lists) {
          const int64_t arrival = list[k]->start_us + offset[rank];
          if (arrival > last_arrival) last_arrival = arrival, last = rank;
          first_arrival = std::min(first_arrival, arrival);
          first_end = std::min(first_end, list[k]->end_us + offset[rank]);
          bytes = std::max(bytes, list[k]->bytes);
        }
        const protocol::Phase phase = lists.begin()->second[k]->phase;
        ++out.collectives;
        ++kinds[phase];
        if (last >= 0 && static_cast<size_t>(last) < out.last_counts.size()) ++out.last_counts[static_cast<size_t>(last)];
        double wait_sum = 0;
        for (const auto& [rank, list] : lists) {
          const int64_t arrival = list[k]->start_us + offset[rank];
          if (rank != last) wait_sum += static_cast<double>(last_arrival - arrival);
          if (static_cast<size_t>(rank) < lateness_us.size())
            lateness_us[static_cast<size_t>(rank)] += static_cast<double>(arrival - first_arrival);
        }
        wait_us += wait_sum / static_cast<double>(lists.size() - 1);
        const int64_t transfer = std::max<int64_t>(0, first_end - last_arrival);
        transfer_us += static_cast<double>(transfer);
        if (bytes > 0 && transfer > 0) {
          bus_bytes += static_cast<double>(bytes) * metrics::bus_factor(phase, world);
          bus_us += static_cast<double>(transfer);
        }
      }
    }
    if (!out.link_busbw_gbps) find_link(*log, out);
  }
  if (out.collectives == 0 || world_seen < 2) return std::nullopt;
  const double steps = static_cast<double>(out.steps);
  out.others_wait_ms_per_step = wait_us / 1000.0 / steps;
  out.transfer_ms_per_step = transfer_us / 1000.0 / steps;
  if (bus_us > 0) out.transfer_busbw_gbps = bus_bytes / (bus_us * 1e3);  // bytes per µs / 1e3 = GB/s
  out.last_rank = static_cast<int>(std::max_element(out.last_counts.begin(), out.last_counts.end()) -
                                   out.last_counts.begin());
  for (double v : lateness_us) out.mean_lateness_ms.push_back(v / 1000.0 / static_cast<double>(out.collectives));
  const auto most = std::max_element(kinds.begin(), kinds.end(),
                                     [](const auto& a, const auto& b) { return a.second < b.second; });
  out.kind = kinds.size() == 1 ? std::string(phase_label(most->first)) : "collective";
  return out;
}

std::string collective_split_sentence(const CollectiveSplit& s) {
  // Some rank is always last by a few microseconds: below what a step's figure shows, no rank
  // waits for another, and naming one would send the reader after nothing.
  constexpr double kShownWaitMs = 0.05;
  std::string out = s.others_wait_ms_per_step < kShownWaitMs
                        ? "the ranks arrive together at the " + s.kind + "s (the others wait under " +
                              format_ms(kShownWaitMs) + " per step)"
                        : "rank " + std::to_string(s.last_rank) + " arrives last in " +
                              std::to_string(s.last_counts.at(static_cast<size_t>(s.last_rank))) + " of " +
                              std::to_string(s.collectives) + " " + s.kind + "s; the others wait " +
                              format_ms(s.others_wait_ms_per_step) + " per step";
  if (s.transfer_busbw_gbps) {
    out += "; the transfer itself runs at " + format_gbps(*s.transfer_busbw_gbps);
    if (s.link_busbw_gbps && *s.link_busbw_gbps > 0)
      out += " (" + format_pct(*s.transfer_busbw_gbps / *s.link_busbw_gbps) + " of the link, " + s.link_name + ")";
    else
      out += " (link peak unknown)";
  } else {
    out += "; the transfer itself takes " + format_ms(s.transfer_ms_per_step) + " per step";
  }
  return out;
}

}  // namespace tunebench::analysis

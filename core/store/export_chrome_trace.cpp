// The Chrome trace event format ("JSON Object Format" of the Trace Event Format document):
// metadata events name processes (ranks) and threads (lanes); complete events carry intervals.
#include <algorithm>
#include <limits>

#include "core/store/export.h"

namespace tunebench::store {
namespace {

namespace tp = protocol;
using nlohmann::json;

int lane_tid(tp::Lane lane) {
  switch (lane) {
    case tp::Lane::Host: return 1;
    case tp::Lane::Compute: return 2;
    case tp::Lane::Comm: return 3;
  }
  return 2;
}

json metadata(const char* name, int pid, int tid, json args) {
  return {{"ph", "M"}, {"name", name}, {"pid", pid}, {"tid", tid}, {"args", std::move(args)}};
}

}  // namespace

json chrome_trace(const LoadedTrial& trial) {
  const auto offset_of = [](const tp::RankLog& r) { return r.hello ? r.hello->clock_offset_us : 0; };
  int64_t origin_us = std::numeric_limits<int64_t>::max();
  for (const auto& [rank, r] : trial.log.ranks)
    for (const auto& s : r.steps)
      for (const auto& in : s.intervals) origin_us = std::min(origin_us, in.start_us + offset_of(r));
  if (origin_us == std::numeric_limits<int64_t>::max()) origin_us = 0;

  json events = json::array();
  for (const auto& [rank, r] : trial.log.ranks) {
    events.push_back(metadata("process_name", rank, 0, {{"name", "rank " + std::to_string(rank)}}));
    events.push_back(metadata("process_sort_index", rank, 0, {{"sort_index", rank}}));
    if (r.hello)
      events.push_back(metadata("process_labels", rank, 0,
                                {{"labels", r.hello->host.empty() ? r.hello->device  // imported traces: no host
                                                                  : r.hello->host + ", " + r.hello->device}}));
    for (tp::Lane lane : tp::kLanes) {
      const int tid = lane_tid(lane);
      events.push_back(metadata("thread_name", rank, tid, {{"name", std::string(tp::to_string(lane))}}));
      events.push_back(metadata("thread_sort_index", rank, tid, {{"sort_index", tid}}));
    }
    const int64_t offset = offset_of(r);
    for (const auto& s : r.steps) {
      for (const auto& in : s.intervals) {
        std::string name(tp::to_string(in.phase));
        if (!in.label.empty()) name += " " + in.label;
        json args = {{"step", s.step}, {"warmup", s.warmup}};
        if (!in.label.empty()) args["label"] = in.label;
        if (in.lane == tp::Lane::Comm || in.bytes != 0) {
          args["bytes"] = in.bytes;
          args["busbw_gbps"] = in.busbw_gbps;
        }
        events.push_back({{"name", std::move(name)},
                          {"cat", std::string(tp::to_string(in.lane))},
                          {"ph", "X"},
                          {"pid", rank},
                          {"tid", lane_tid(in.lane)},
                          {"ts", in.start_us + offset - origin_us},
                          {"dur", std::max<int64_t>(0, in.end_us - in.start_us)},
                          {"args", std::move(args)}});
      }
    }
  }
  return {{"traceEvents", std::move(events)},
          {"displayTimeUnit", "ms"},
          {"otherData",
           {{"tool", "tunebench"},
            {"trial_id", trial.info.id},
            {"trial", trial.info.name},
            {"origin_us", origin_us}}}};
}

json chrome_trace(const std::vector<LoadedTrial>& trials) {
  if (trials.size() == 1) return chrome_trace(trials.front());
  json events = json::array();
  for (size_t i = 0; i < trials.size(); ++i) {
    const LoadedTrial& trial = trials[i];
    const int64_t base = int64_t(1000) * int64_t(i);
    json trace = chrome_trace(trial);
    for (json& e : trace["traceEvents"]) {
      const int64_t rank = e.value("pid", int64_t{0});
      e["pid"] = base + rank;
      if (e.value("ph", "") == "M") {
        const std::string name = e.value("name", "");
        if (name == "process_name") e["args"]["name"] = trial.info.name + " \u00b7 rank " + std::to_string(rank);
        if (name == "process_sort_index") e["args"]["sort_index"] = base + rank;
      }
      events.push_back(std::move(e));
    }
  }
  json ids = json::array(), names = json::array();
  for (const auto& t : trials) {
    ids.push_back(t.info.id);
    names.push_back(t.info.name);
  }
  return {{"traceEvents", std::move(events)},
          {"displayTimeUnit", "ms"},
          {"otherData", {{"tool", "tunebench"}, {"trial_ids", std::move(ids)}, {"trials", std::move(names)}}}};
}

}  // namespace tunebench::store

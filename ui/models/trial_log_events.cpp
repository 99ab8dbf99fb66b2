#include "ui/models/trial_log_events.h"

#include <algorithm>
#include <climits>

#include "core/analysis/throughput.h"

namespace tunebench::ui {

EventBatch trial_log_events(const protocol::TrialLog& log) {
  // The earliest time of the trial on any rank: hello and model are stamped there, so every
  // plot's time origin is the same as in the live run it came from.
  int64_t first = LLONG_MAX, last = LLONG_MIN;
  for (const auto& [rank, r] : log.ranks) {
    for (const auto& s : r.steps) {
      first = std::min(first, s.start_us);
      last = std::max(last, s.end_us);
    }
    for (const auto& s : r.samples) {
      first = std::min(first, s.t_us);
      last = std::max(last, s.t_us);
    }
  }
  if (first == LLONG_MAX) first = last = 0;
  int64_t tokens = -1;  // computed at the first step without tokens

  EventBatch head, body, tail;
  auto header = [&](int rank, int64_t t) { return protocol::Header{protocol::kSchemaVersion, log.trial, rank, t}; };
  for (const auto& [rank, r] : log.ranks) {
    if (r.hello) head.push_back({header(rank, first), *r.hello});
    if (r.model) head.push_back({header(rank, first), *r.model});
    for (const auto& s : r.steps) {
      body.push_back({header(rank, s.end_us), s});
      if (s.tokens == 0) {
        if (tokens < 0) tokens = analysis::configured_tokens_per_rank_step(log);
        body.back().as<protocol::Step>().tokens = tokens;
      }
    }
    for (const auto& s : r.samples) body.push_back({header(rank, s.t_us), s.value});
    for (const auto& m : r.logs) body.push_back({header(rank, m.t_us), m.value});
    for (const auto& m : r.warnings) body.push_back({header(rank, m.t_us), m.value});
    for (const auto& m : r.errors) body.push_back({header(rank, m.t_us), m.value});
    if (r.done) tail.push_back({header(rank, last), *r.done});
  }
  std::stable_sort(body.begin(), body.end(),
                   [](const protocol::Event& a, const protocol::Event& b) { return a.header.t_us < b.header.t_us; });
  head.reserve(head.size() + body.size() + tail.size());
  for (auto* part : {&body, &tail})
    for (auto& e : *part) head.push_back(std::move(e));
  return head;
}

}  // namespace tunebench::ui

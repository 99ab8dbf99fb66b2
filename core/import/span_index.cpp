#include "core/import/span_index.h"

#include <algorithm>

namespace tunebench::import {

SpanIndex::SpanIndex(const std::vector<CpuSpan>& spans) {
  for (const CpuSpan& s : spans) m_threads[s.tid].spans.push_back(s);
  for (auto& [tid, th] : m_threads) {
    std::sort(th.spans.begin(), th.spans.end(), [](const CpuSpan& a, const CpuSpan& b) {
      return a.start_ns != b.start_ns ? a.start_ns < b.start_ns : a.end_ns > b.end_ns;  // outer first
    });
    th.max_end.resize(th.spans.size());
    int64_t m = INT64_MIN;
    for (size_t i = 0; i < th.spans.size(); ++i) th.max_end[i] = m = std::max(m, th.spans[i].end_ns);
  }
}

int64_t SpanIndex::last_starting(const Thread& thread, int64_t t_ns) {
  const auto it = std::upper_bound(thread.spans.begin(), thread.spans.end(), t_ns,
                                   [](int64_t t, const CpuSpan& s) { return t < s.start_ns; });
  return static_cast<int64_t>(it - thread.spans.begin()) - 1;
}

bool SpanIndex::covers(int64_t tid, int64_t t_ns) const {
  const auto it = m_threads.find(tid);
  if (it == m_threads.end()) return false;
  const int64_t i = last_starting(it->second, t_ns);
  return i >= 0 && it->second.max_end[static_cast<size_t>(i)] >= t_ns;
}

int32_t SpanIndex::innermost_label(int64_t tid, int64_t t_ns) const {
  const auto it = m_threads.find(tid);
  if (it == m_threads.end()) return -1;
  const Thread& th = it->second;
  // Walk back from the latest span starting before t; stop once no earlier span can reach t.
  for (int64_t i = last_starting(th, t_ns); i >= 0; --i) {
    const auto k = static_cast<size_t>(i);
    if (th.max_end[k] < t_ns) break;
    if (th.spans[k].end_ns >= t_ns) return th.spans[k].label;
  }
  return -1;
}

}  // namespace tunebench::import

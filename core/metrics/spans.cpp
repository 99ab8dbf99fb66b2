#include "core/metrics/spans.h"

#include <algorithm>

namespace tunebench::metrics {

std::vector<Span> span_union(std::vector<Span> spans) {
  spans.erase(std::remove_if(spans.begin(), spans.end(), [](const Span& s) { return s.length_us() == 0; }),
              spans.end());
  std::sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) { return a.start_us < b.start_us; });
  std::vector<Span> out;
  for (const auto& s : spans) {
    if (!out.empty() && s.start_us <= out.back().end_us)
      out.back().end_us = std::max(out.back().end_us, s.end_us);
    else
      out.push_back(s);
  }
  return out;
}

int64_t covered_us(std::vector<Span> spans) {
  int64_t total = 0;
  for (const auto& s : span_union(std::move(spans))) total += s.length_us();
  return total;
}

std::vector<Span> clip(const std::vector<Span>& spans, Span window) {
  std::vector<Span> out;
  for (const auto& s : spans) {
    Span c{std::max(s.start_us, window.start_us), std::min(s.end_us, window.end_us)};
    if (c.length_us() > 0) out.push_back(c);
  }
  return out;
}

std::vector<Span> intersect(std::vector<Span> a, std::vector<Span> b) {
  const auto ua = span_union(std::move(a));
  const auto ub = span_union(std::move(b));
  std::vector<Span> out;
  size_t i = 0, j = 0;
  while (i < ua.size() && j < ub.size()) {
    Span c{std::max(ua[i].start_us, ub[j].start_us), std::min(ua[i].end_us, ub[j].end_us)};
    if (c.length_us() > 0) out.push_back(c);
    // Advance whichever ends first; the other may still overlap the next span.
    if (ua[i].end_us < ub[j].end_us)
      ++i;
    else
      ++j;
  }
  return out;
}

int64_t uncovered_us(std::vector<Span> a, std::vector<Span> b) {
  const int64_t all = covered_us(a);
  return all - covered_us(intersect(std::move(a), std::move(b)));
}

}  // namespace tunebench::metrics

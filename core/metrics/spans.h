// Interval-union arithmetic on microsecond spans: union, intersection, "covered by".
//
// Exposed communication is "comm time not covered by any compute interval"; overlapping
// collectives (FSDP all-gather and reduce-scatter on two streams) must not be counted twice.
// Both are questions about unions of half-open spans [start, end), answered here exactly in
// integers. Nothing here knows about phases or lanes.
#pragma once

#include <cstdint>
#include <vector>

namespace tunebench::metrics {

struct Span {
  int64_t start_us = 0;
  int64_t end_us = 0;
  int64_t length_us() const { return end_us > start_us ? end_us - start_us : 0; }
};

// Sorted, disjoint, non-empty spans covering exactly what `spans` cover (touching spans merge).
std::vector<Span> span_union(std::vector<Span> spans);
// Length of the union.
int64_t covered_us(std::vector<Span> spans);
// The parts of `spans` inside [window.start_us, window.end_us); empty ones dropped.
std::vector<Span> clip(const std::vector<Span>& spans, Span window);
// Union of `a` intersected with union of `b`.
std::vector<Span> intersect(std::vector<Span> a, std::vector<Span> b);
// Length of the union of `a` not covered by the union of `b`.
int64_t uncovered_us(std::vector<Span> a, std::vector<Span> b);

}  // namespace tunebench::metrics

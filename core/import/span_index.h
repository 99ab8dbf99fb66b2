// SpanIndex: "which CPU span of this thread was open at time t?" for many queries.
//
// A GPU activity takes its phase from the CPU spans around its launch on the launching thread
// (backward, optimizer, recomputed forward op). Spans of one thread nest (a backward function
// inside a checkpoint's backward) or follow one another. The index sorts them per thread by start
// and keeps a running maximum of the ends, so covers() is one binary search whatever the nesting.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "core/import/trace_records.h"

namespace tunebench::import {

class SpanIndex {
 public:
  SpanIndex() = default;
  explicit SpanIndex(const std::vector<CpuSpan>& spans);

  // True when a span of `tid` contains t (start <= t <= end).
  bool covers(int64_t tid, int64_t t_ns) const;
  // The label of the innermost span of `tid` containing t (the latest-starting one), -1 if none.
  int32_t innermost_label(int64_t tid, int64_t t_ns) const;
  bool empty() const { return m_threads.empty(); }

 private:
  struct Thread {
    std::vector<CpuSpan> spans;    // by start
    std::vector<int64_t> max_end;  // max_end[i] = max end of spans[0..i]
  };
  // Index of the last span of `thread` starting at or before t, -1 if none.
  static int64_t last_starting(const Thread& thread, int64_t t_ns);

  std::unordered_map<int64_t, Thread> m_threads;
};

}  // namespace tunebench::import

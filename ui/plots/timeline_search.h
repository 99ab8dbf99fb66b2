// Finding phases and collectives on the timeline ("all-reduce", "bucket 3", "data wait"), as
// Nsight Systems' search does: every bar whose phase name or label contains the query, in time
// order, so the view can step from one to the next. Plain functions over TimelineData.
#pragma once

#include <string>
#include <vector>

#include <QString>

#include "ui/plots/timeline_data.h"

namespace tunebench::ui {

struct BarRef {
  int row = 0;       // data row: TimelineRows::row(rank, lane)
  size_t index = 0;  // into TimelineData::row(row)
};

// True when `bar` matches `query` (case-insensitive; "allreduce", "all_reduce" and "all reduce"
// all find "all-reduce"; "h2d" finds host-to-device).
bool bar_matches(const TimelineBar& bar, const QString& query);
// Every matching bar of the given data rows, sorted by start time.
std::vector<BarRef> find_bars(const TimelineData& data, const QString& query, const std::vector<int>& rows);

}  // namespace tunebench::ui

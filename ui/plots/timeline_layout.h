// TimelineLayout: which rows the timeline shows, top to bottom. With 8 ranks x 3 lanes a timeline
// gets crowded, so ranks can be hidden (a filter: "0-3,7") and a rank's three lanes collapsed into
// one row (host, compute and comm as thin thirds of it), as Nsight Systems folds a process.
// A value type with no widgets: the plot, the hit test and the labels read it, tests build it.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "ui/plots/timeline_geometry.h"

namespace tunebench::ui {

struct TimelineSlot {
  int rank = 0;
  std::optional<protocol::Lane> lane;  // nullopt: the rank's lanes collapsed into this row
};

class TimelineLayout {
 public:
  TimelineLayout() = default;
  // `ranks` ranks in order; `hidden` are left out, `collapsed` get one row each.
  TimelineLayout(int ranks, std::set<int> hidden, std::set<int> collapsed);

  int count() const { return int(m_slots.size()); }
  const TimelineSlot& slot(int index) const { return m_slots.at(size_t(index)); }
  // The slot under value-axis coordinate `value` (slot i is centred on i), nullopt between bars.
  std::optional<int> slotAt(double value) const;
  // The lane drawn at `value` inside `slot` (for a collapsed slot, the third it falls in).
  std::optional<protocol::Lane> laneAt(int slot, double value) const;
  // The value-axis band [lo, hi] where `lane` of `slot` is drawn.
  std::pair<double, double> band(int slot, protocol::Lane lane) const;
  // The slot showing (rank, lane), -1 when that rank is hidden.
  int slotOf(int rank, protocol::Lane lane) const;
  bool isHidden(int rank) const { return m_hidden.count(rank) > 0; }
  bool isCollapsed(int rank) const { return m_collapsed.count(rank) > 0; }
  int ranks() const { return m_ranks; }

 private:
  int m_ranks = 0;
  std::set<int> m_hidden, m_collapsed;
  std::vector<TimelineSlot> m_slots;
};

// "0-3, 7" -> {0, 1, 2, 3, 7}; empty text -> every rank; nullopt when the text is not a list of
// ranks and ranges (the field shows it red). Ranks beyond `ranks` are ignored.
std::optional<std::set<int>> parse_rank_list(const std::string& text, int ranks);

}  // namespace tunebench::ui

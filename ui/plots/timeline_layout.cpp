#include "ui/plots/timeline_layout.h"

#include <cctype>
#include <cmath>

namespace tunebench::ui {

TimelineLayout::TimelineLayout(int ranks, std::set<int> hidden, std::set<int> collapsed)
    : m_ranks(ranks), m_hidden(std::move(hidden)), m_collapsed(std::move(collapsed)) {
  for (int r = 0; r < ranks; ++r) {
    if (isHidden(r)) continue;
    if (isCollapsed(r)) {
      m_slots.push_back({r, std::nullopt});
      continue;
    }
    for (protocol::Lane lane : protocol::kLanes) m_slots.push_back({r, lane});
  }
}

std::optional<int> TimelineLayout::slotAt(double value) const {
  const double nearest = std::round(value);
  if (std::abs(value - nearest) > TimelineRows::kBarHalfHeight) return std::nullopt;
  const int index = int(nearest);
  if (index < 0 || index >= count()) return std::nullopt;
  return index;
}

std::pair<double, double> TimelineLayout::band(int index, protocol::Lane lane) const {
  const double lo = index - TimelineRows::kBarHalfHeight, hi = index + TimelineRows::kBarHalfHeight;
  if (slot(index).lane) return {lo, hi};
  const double third = (hi - lo) / 3.0;  // host on top (the axis is reversed: smaller is higher)
  const int k = int(lane);
  return {lo + k * third, lo + (k + 1) * third};
}

std::optional<protocol::Lane> TimelineLayout::laneAt(int index, double value) const {
  if (index < 0 || index >= count()) return std::nullopt;
  if (const auto lane = slot(index).lane) return lane;
  for (protocol::Lane lane : protocol::kLanes) {
    const auto [lo, hi] = band(index, lane);
    if (value >= lo && value <= hi) return lane;
  }
  return std::nullopt;
}

int TimelineLayout::slotOf(int rank, protocol::Lane lane) const {
  for (int i = 0; i < count(); ++i)
    if (m_slots[size_t(i)].rank == rank && (!m_slots[size_t(i)].lane || *m_slots[size_t(i)].lane == lane)) return i;
  return -1;
}

std::optional<std::set<int>> parse_rank_list(const std::string& text, int ranks) {
  std::set<int> out;
  bool any = false;
  size_t i = 0;
  auto skip = [&] {
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  };
  auto number = [&]() -> std::optional<long> {
    skip();
    const size_t start = i;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])) && i - start < 6) ++i;
    if (i == start) return std::nullopt;
    return std::stol(text.substr(start, i - start));
  };
  skip();
  if (i == text.size()) {
    for (int r = 0; r < ranks; ++r) out.insert(r);
    return out;
  }
  while (i < text.size()) {
    const auto a = number();
    if (!a) return std::nullopt;
    long b = *a;
    skip();
    if (i < text.size() && text[i] == '-') {
      ++i;
      const auto end = number();
      if (!end || *end < *a) return std::nullopt;
      b = *end;
      skip();
    }
    for (long r = *a; r <= b && r < ranks; ++r) out.insert(int(r));
    any = true;
    if (i < text.size()) {
      if (text[i] != ',') return std::nullopt;
      ++i;
      skip();
    }
  }
  if (!any) return std::nullopt;
  return out;
}

}  // namespace tunebench::ui

// Which rectangles a row of timeline bars paints at a zoom. The timeline and its overview strip
// both paint through this, so they agree on every pixel.
//
// Bars at least a pixel wide paint as they are. Narrower bars share their pixel column, and the
// column takes the phase that covers most of it. A kernel-sampled forward of thousands of kernels,
// with launch gaps of microseconds between them, thus reads as forward and not as the gaps. Before,
// the first bar to start in a column took it: four columns in ten showed the gaps there. A bar for
// which `wins(i)` holds (a search match) takes its column whatever covers it. A column already
// under a wider bar is not painted again, unless a winning bar is in it.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <vector>

#include "ui/plots/timeline_data.h"

namespace tunebench::ui {

struct BarRect {
  double x0 = 0, x1 = 0;  // pixels, x1 - x0 >= 1
  protocol::Phase phase = protocol::Phase::Other;
  bool wins = false;
};

// `x_of(seconds)` maps a time to a pixel; `paint(const BarRect&)` fills one rectangle.
template <class XOf, class Wins, class Paint>
void paint_bar_row(const std::vector<TimelineBar>& bars, size_t first, size_t last, XOf x_of, Wins wins, Paint paint) {
  constexpr size_t kPhases = size_t(protocol::Phase::DependencyWait) + 1;
  std::array<double, kPhases> cover{};
  double paintedUpTo = -1e300;
  double column = 0;
  bool columnUsed = false, columnWins = false;
  protocol::Phase winner = protocol::Phase::Other;
  auto put = [&](const BarRect& r) {
    paint(r);
    paintedUpTo = r.x1;
  };
  auto flush = [&] {
    if (!columnUsed) return;
    columnUsed = false;
    if (column < paintedUpTo - 0.5 && !columnWins) return;
    const auto best = protocol::Phase(std::max_element(cover.begin(), cover.end()) - cover.begin());
    put({column, column + 1.0, columnWins ? winner : best, columnWins});
  };
  for (size_t i = first; i < last && i < bars.size(); ++i) {
    const TimelineBar& b = bars[i];
    const double x0 = x_of(b.start_s), x1 = x_of(b.end_s);
    const bool w = wins(i);
    if (x1 - x0 >= 1.0) {
      flush();
      put({x0, x1, b.phase, w});
      continue;
    }
    const double px = std::floor(x0);
    if (!columnUsed || px != column) {
      flush();
      column = px;
      columnUsed = true;
      columnWins = false;
      cover.fill(0.0);
    }
    if (size_t(b.phase) < kPhases) cover[size_t(b.phase)] += std::max(x1 - x0, 1e-9);
    if (w && !columnWins) {
      columnWins = true;
      winner = b.phase;
    }
  }
  flush();
}

}  // namespace tunebench::ui

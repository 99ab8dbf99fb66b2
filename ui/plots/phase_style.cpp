#include "ui/plots/phase_style.h"

#include "core/analysis/phase_style.h"

namespace tunebench::ui {

using protocol::Lane;
using protocol::Phase;

namespace {
QString text(std::string_view s) { return QString::fromUtf8(s.data(), qsizetype(s.size())); }
}  // namespace

QColor phase_color(Phase phase) { return QColor(QRgb(analysis::phase_rgb(phase))); }

QString phase_name(Phase phase) { return text(analysis::phase_label(phase)); }

QString lane_name(Lane lane) { return text(analysis::lane_label(lane)); }

const std::vector<Phase>& legend_phases() { return analysis::legend_phases(); }

QColor series_color(int i) { return QColor(QRgb(analysis::series_rgb(i))); }

}  // namespace tunebench::ui

#include "core/analysis/format.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace tunebench::analysis {

std::string format_fixed(double value, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, value);
  std::string s(buf);
  if (s == "-0" || s.rfind("-0.", 0) == 0) {  // no "-0.0"
    bool zero = true;
    for (char c : s)
      zero = zero && (c == '-' || c == '0' || c == '.');
    if (zero) s.erase(0, 1);
  }
  return s;
}

std::string format_significant(double value, int digits) {
  if (value == 0 || !std::isfinite(value)) return format_fixed(value, 0);
  const int magnitude = static_cast<int>(std::floor(std::log10(std::abs(value))));
  return format_fixed(value, std::max(0, digits - 1 - magnitude));
}

std::string format_gbps(double gbps) { return format_significant(gbps, 3) + " GB/s"; }

std::string format_ms(double ms) {
  if (std::abs(ms) >= 1000.0) return format_fixed(ms / 1000.0, 2) + " s";
  if (std::abs(ms) >= 100.0) return format_fixed(ms, 0) + " ms";
  if (ms != 0 && std::abs(ms) < 0.1) return format_significant(ms, 2) + " ms";
  return format_fixed(ms, 1) + " ms";
}

std::string format_signed_ms(double ms) { return (ms >= 0 ? "+" : "-") + format_ms(std::abs(ms)); }

std::string format_gb(double bytes) {
  const double gb = bytes / 1e9;
  if (gb >= 0.1 || gb == 0) return format_fixed(gb, 1) + " GB";
  return format_fixed(bytes / 1e6, 1) + " MB";
}

std::string format_gib(double bytes) { return format_fixed(bytes / (1024.0 * 1024.0 * 1024.0), 1) + " GiB"; }

std::string format_pct(double fraction) {
  const double pct = fraction * 100.0;
  return format_fixed(pct, std::abs(pct) < 10.0 ? 1 : 0) + " %";
}

std::string format_ratio(double ratio) { return format_fixed(ratio, 2) + "x"; }

std::string format_count(double value) {
  const auto v = static_cast<long long>(std::llround(value));
  std::string digits = std::to_string(std::llabs(v));
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return (v < 0 ? "-" : "") + out;
}

int metric_decimals(double v, const std::string& unit) {
  if (unit == "tokens/s" || unit == "tokens") return 0;
  if (unit == "GB") return 2;
  // Three significant digits, as format_gbps writes a bandwidth in sentences: the table's 0.131
  // GB/s is the diagnosis's 0.131 GB/s.
  if (unit == "GB/s")
    return v == 0 || !std::isfinite(v) ? 0 : std::max(0, 2 - static_cast<int>(std::floor(std::log10(std::abs(v)))));
  if (unit == "%" && std::abs(v) < 10) return 2;
  return 1;
}

bool shows_as_zero(double v, const std::string& unit) {
  return std::abs(v) < 0.5 * std::pow(10.0, -metric_decimals(v, unit));
}

std::string format_metric_value(double v, const std::string& unit) {
  if (unit == "tokens/s" || unit == "tokens") return format_count(v);
  return format_fixed(v, metric_decimals(v, unit));
}

std::string format_metric_spread(const Spread& s, const std::string& unit) {
  std::string out = format_metric_value(s.median, unit);
  if (s.n > 1 && s.p25 != s.p75)
    out += " [" + format_metric_value(s.p25, unit) + "–" + format_metric_value(s.p75, unit) + "]";
  return out;
}

}  // namespace tunebench::analysis

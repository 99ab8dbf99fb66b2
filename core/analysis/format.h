// Number formatting for findings and reports, one convention everywhere.
//
// Times: "45.0 ms" below one second, "1.50 s" above, two significant digits below 0.1 ms ("0.043 ms").
// Bandwidths with three significant digits ("0.412 GB/s"). Traffic in GB (1e9 bytes, as GB/s of busbw),
// memory in GiB (as the CUDA allocator and nvidia-smi report it). Percentages "74 %", ratios
// "1.60x", counts with thousands separators "5,461". No locale, no I/O.
#pragma once

#include <cstdint>
#include <string>

#include "core/analysis/statistics.h"

namespace tunebench::analysis {

std::string format_ms(double ms);
std::string format_signed_ms(double ms);  // "+45.0 ms" / "-3.0 ms"
std::string format_gb(double bytes);      // "13.5 GB"
std::string format_gib(double bytes);     // "101.6 GiB"
std::string format_pct(double fraction);  // 0.74 -> "74 %"; below 10 % with one decimal
std::string format_ratio(double ratio);   // "1.60x"
std::string format_count(double value);   // 5461.3 -> "5,461"
std::string format_fixed(double value, int decimals);
// At least `digits` significant digits, never exponent notation: 0.412 -> "0.412", 27.6 -> "27.6",
// 310.4 -> "310" (digits 3). So a small figure never rounds to "0".
std::string format_significant(double value, int digits = 3);
std::string format_gbps(double gbps);  // "0.412 GB/s", "27.6 GB/s", "310 GB/s"

// The decimals a comparison metric's number is shown with, in every view (window, text, HTML and
// Markdown reports): none for tokens and tokens/s, two for GB, three significant digits for GB/s
// (format_gbps's: a CPU's 0.131 GB/s, an H200's 310), two for % below 10, one otherwise.
int metric_decimals(double value, const std::string& unit);
// Whether the value shows as zero at those decimals ("0.0"): below the display threshold, where a
// ratio of two such values means nothing (0.0 vs 0.0 is not 0.88x).
bool shows_as_zero(double value, const std::string& unit);
// A comparison metric's number in its row's unit, without the unit, at metric_decimals: counts for
// tokens and tokens/s ("5,461"). The text, HTML and Markdown reports print metric rows with these.
std::string format_metric_value(double value, const std::string& unit);
// The median, then " [p25–p75]" when there is a spread.
std::string format_metric_spread(const Spread& spread, const std::string& unit);

}  // namespace tunebench::analysis

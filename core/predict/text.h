// Number formatting shared by the predictor's messages and tables (internal to core/predict).
#pragma once

#include <cstdio>
#include <string>

namespace tunebench::predict {

inline constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// One number through a printf format ("%.1f ms").
inline std::string fmt(const char* format, double v) {
  char buf[96];
  std::snprintf(buf, sizeof(buf), format, v);
  return buf;
}

}  // namespace tunebench::predict

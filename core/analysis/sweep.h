// Sweeps: knobs and value lists -> the grid of trial configurations, and the results as a table
// of metric against swept knob.
//
// The grid is the Cartesian product of the axes in the order given (the last axis varies
// fastest), each point repeated `repeats` times to measure noise. Every point is validated:
// invalid combinations are reported with their problems, never dropped silently. This file
// neither runs nor queues trials (the runner does).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/analysis/statistics.h"
#include "core/analysis/trial_metrics.h"
#include "core/config/trial_config.h"

namespace tunebench::analysis {

struct SweepAxis {
  std::string key;                  // config JSON key
  std::vector<std::string> values;  // as config::set_knob takes them
};

struct SweepSpec {
  config::TrialConfig base;
  std::vector<SweepAxis> axes;
  int repeats = 1;
};

struct SweepPoint {
  std::vector<std::string> values;  // one per axis
  int repeat = 0;                   // 0-based
  config::TrialConfig config;       // named "<base name> [key=value, ...] #r"
};

struct InvalidPoint {
  std::vector<std::string> values;
  std::vector<config::Problem> problems;
};

struct SweepPlan {
  std::vector<SweepPoint> trials;              // valid points x repeats, in grid order
  std::vector<InvalidPoint> invalid;           // each invalid combination once
  std::vector<config::Problem> spec_problems;  // empty axis, unknown key, repeats < 1
  size_t grid_size = 0;                        // product of the axis sizes
};

SweepPlan plan_sweep(const SweepSpec& spec);

struct SweepRow {
  std::vector<std::string> values;  // swept knobs' values (knob_text)
  int repeats = 0;                  // trials pooled into this row
  Spread step_ms;
  Spread tokens_per_s_per_gpu;
  Spread tokens_per_s_total;
  std::optional<double> mfu;
  Spread exposed_comm_ms;
  int64_t peak_bytes = 0;
  std::optional<double> tokens_per_joule;  // metrics/energy.h; nullopt: unknown (CPU, a run too short for the counter)
  bool failed = false;  // no measured steps (e.g. out of memory)
};

struct SweepTable {
  std::vector<std::string> keys;  // swept knobs
  std::vector<SweepRow> rows;     // sorted by the values (numerically where they are numbers)
};

// Groups (pooled) trial metrics by the swept knobs' values; trials without a config are skipped.
SweepTable sweep_table(const std::vector<TrialMetrics>& trials, const std::vector<std::string>& keys);

}  // namespace tunebench::analysis

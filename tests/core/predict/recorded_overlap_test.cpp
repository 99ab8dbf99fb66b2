// optimizer_overlap as measured on one H200 (tests/data/optimizer-overlap, README there): the 7B in
// `compile fused`, serial update against each unit's update queued during the backward, two
// interleaved rounds; the tiny model both ways. What the predictor assumes must hold in the data:
// the update's time moves into the backward's interval, the step keeps its length, the peak is the
// memory model's, and the update is the same one (equal losses).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <regex>
#include <string>
#include <vector>

#include "core/analysis/trial_metrics.h"
#include "core/predict/memory_model.h"
#include "core/protocol/trial_log.h"

namespace tp = tunebench::predict;
namespace ta = tunebench::analysis;

namespace {

struct OverlapRun {
  tunebench::config::TrialConfig config;
  double step_ms = 0;  // median of the measured steps
  double backward_ms = 0, optimizer_ms = 0;
  int64_t peak_bytes = 0;  // the largest phase peak (TUNEBENCH_MEMORY_PHASES=1)
  std::vector<double> losses;
};

OverlapRun load(const std::string& name) {
  const auto log = tunebench::protocol::read_trial_log_file(std::string(TUNEBENCH_TEST_DATA_DIR) +
                                                            "/optimizer-overlap/" + name + ".jsonl");
  OverlapRun r;
  r.config = tunebench::config::from_json(log.config()).config;
  std::vector<double> steps;
  for (const auto* s : log.measured_steps(0)) steps.push_back(s->step_ms);
  std::sort(steps.begin(), steps.end());
  if (!steps.empty()) r.step_ms = (steps[(steps.size() - 1) / 2] + steps[steps.size() / 2]) / 2;
  const auto m = ta::analyze(log);
  r.backward_ms = m.breakdown[ta::Part::Backward];
  r.optimizer_ms = m.breakdown[ta::Part::Optimizer];
  static const std::regex phase(R"((\w+) peak (\d+) then (\d+);)");
  const auto& rank = log.ranks.at(0);
  for (const auto& l : rank.logs)
    for (std::sregex_iterator it(l.value.message.begin(), l.value.message.end(), phase), end; it != end; ++it)
      r.peak_bytes = std::max<int64_t>(r.peak_bytes, std::stoll((*it)[2].str()));
  for (const auto& s : rank.steps) r.losses.push_back(s.loss);
  return r;
}

}  // namespace

TEST(RecordedOverlap, OnTheH200TheUpdateMovesIntoTheBackwardAndTheStepKeepsItsLength) {
  for (const char* round : {"1", "2"}) {
    SCOPED_TRACE(round);
    const OverlapRun serial = load(std::string("7b-fused-serial-") + round);
    const OverlapRun overlap = load(std::string("7b-fused-overlap-") + round);
    ASSERT_FALSE(serial.config.optimizer_overlap);
    ASSERT_TRUE(overlap.config.optimizer_overlap);
    ASSERT_GT(serial.optimizer_ms, 40.0);
    EXPECT_NEAR(overlap.step_ms / serial.step_ms, 1.0, 0.02);
    EXPECT_LT(overlap.optimizer_ms, 0.05 * serial.optimizer_ms);
    const double moved = serial.optimizer_ms - overlap.optimizer_ms;
    EXPECT_NEAR(overlap.backward_ms - serial.backward_ms, moved, 0.1 * moved);
    for (const OverlapRun* r : {&serial, &overlap}) {
      tp::MemoryOptions options;
      options.device_memory_bytes = int64_t{150109880320};  // the H200 the runs reported
      const double predicted = static_cast<double>(tp::predict_memory(r->config, options).peak_bytes);
      EXPECT_NEAR(predicted / static_cast<double>(r->peak_bytes), 1.0, 0.03) << r->config.optimizer_overlap;
    }
    EXPECT_LT(overlap.peak_bytes, serial.peak_bytes - (int64_t{2} << 30));  // the gradients freed unit by unit
  }
  const OverlapRun a = load("tiny-serial"), b = load("tiny-overlap");
  ASSERT_EQ(a.losses.size(), 12u);
  EXPECT_EQ(a.losses, b.losses);
}

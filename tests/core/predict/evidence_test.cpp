// Which trials calibrate a prediction: an imported trace whose model and step are unknown calibrates
// nothing (issue 44: a ResNet trace moved a 7B prediction), and a trial its owner keeps out (the tag
// "no-calibration") is left out with a note, both said in the evidence's notes.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "core/config/trial_config.h"
#include "core/predict/evidence.h"
#include "core/predict/predictor.h"
#include "core/protocol/trial_log.h"

namespace tp = tunebench::predict;
namespace fs = std::filesystem;

namespace {

std::string gpu_log(const std::string& file) { return std::string(TUNEBENCH_TEST_DATA_DIR) + "/gpu/" + file; }

std::shared_ptr<const tunebench::protocol::TrialLog> read(const std::string& path) {
  return std::make_shared<tunebench::protocol::TrialLog>(tunebench::protocol::read_trial_log_file(path));
}

// The recorded 125M run as an import leaves it: the same events, but a configuration without the
// model's shape and the step's work (nobody can read those off a trace).
std::string as_imported(const std::string& from) {
  const fs::path to = fs::temp_directory_path() / ("tunebench-evidence-" + std::to_string(::getpid()) + ".jsonl");
  std::ifstream in(from);
  std::ofstream out(to);
  std::string line;
  while (std::getline(in, line)) {
    auto j = nlohmann::json::parse(line);
    if (j.value("type", "") == "hello")
      for (const char* key : {"model", "dim", "layers", "heads", "ffn", "vocab", "micro_batch", "seq_len"})
        j["config"].erase(key);
    out << j.dump() << "\n";
  }
  return to.string();
}

double predicted_7b_step_ms(const tp::Evidence& evidence) {
  tp::Scenario s;
  s.config = *tunebench::config::trial_preset("7b-single");
  s.gpu = "h200";
  const auto p = tp::predict_scenario(s, evidence.select([](const tp::MeasuredTrial&) { return true; }));
  EXPECT_TRUE(p.step.has_value());
  return p.step ? p.step->step_ms : 0;
}

bool has_note(const tp::Evidence& e, const std::string& part) {
  for (const auto& n : e.notes())
    if (n.find(part) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST(Evidence, ATraceOfUnknownModelCalibratesNothing) {
  tp::Evidence alone;
  alone.add("7b", read(gpu_log("h200-7b-single-2.jsonl")));
  const double base = predicted_7b_step_ms(alone);

  // Known, the 125M trial on the same GPU does move the 7B prediction: leaving it out matters.
  tp::Evidence with_known = alone;
  with_known.add("125m", read(gpu_log("h200-125m-single.jsonl")));
  ASSERT_EQ(with_known.trials().size(), 2u);
  EXPECT_NE(predicted_7b_step_ms(with_known), base);

  const std::string imported = as_imported(gpu_log("h200-125m-single.jsonl"));
  tp::Evidence with_trace = alone;
  with_trace.add("trace", read(imported));
  fs::remove(imported);
  EXPECT_EQ(with_trace.trials().size(), 1u);
  EXPECT_DOUBLE_EQ(predicted_7b_step_ms(with_trace), base);
  EXPECT_TRUE(has_note(with_trace, "trace: not used: its model is unknown")) << with_trace.notes().size();
  EXPECT_TRUE(has_note(with_trace, "Trial > Settings"));
}

TEST(Evidence, ATrialKeptOutIsLeftOutAndSaidSo) {
  tp::Evidence e;
  e.add("7b", read(gpu_log("h200-7b-single-2.jsonl")), {"baseline"});
  e.add("125m", read(gpu_log("h200-125m-single.jsonl")), {"warm", tp::kNoCalibrationTag});
  ASSERT_EQ(e.trials().size(), 1u);
  EXPECT_EQ(e.trials()[0].label, "7b");
  EXPECT_TRUE(has_note(e, "125m: not used: kept out of predictions"));
  EXPECT_EQ(tp::Evidence::kept_out_note("x"), "x: not used: kept out of predictions (Trial > Use for predictions; "
                                              "tag \"no-calibration\")");
}

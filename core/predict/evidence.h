// What a session measured, ready for predictions: its training trials (config, device, transport,
// metrics) and its link probes. Predictions take their efficiency factors, link bandwidths and
// contention from here wherever the session has them, and from the catalogue otherwise.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/analysis/trial_metrics.h"
#include "core/config/trial_config.h"
#include "core/hardware/hardware.h"
#include "core/predict/link_model.h"
#include "core/protocol/trial_log.h"

namespace tunebench::predict {

// The tag of a trial its owner keeps out of every prediction's calibration (the window's Trial >
// Use for predictions, unticked; `tunebench-cli predict --evidence` honours it too).
inline constexpr const char* kNoCalibrationTag = "no-calibration";

struct MeasuredTrial {
  std::string label;  // trial name or file name
  std::shared_ptr<const protocol::TrialLog> log;
  config::TrialConfig config;
  analysis::TrialMetrics metrics;
  std::string device;                      // as the hello reported it ("NVIDIA H200", "cpu")
  std::string transport;                   // transport_key(): trials with the same key ran over the same link
  const hardware::GpuSpec* gpu = nullptr;  // nullptr: not in the catalogue
  bool cuda = true;
  bool probe = false;  // a link probe (probe events), not a training run
  int64_t device_memory_bytes = 0;

  // A training trial with measured steps (not a probe, not out of memory).
  bool has_steps() const;
  // Its phases can calibrate compute: no CUDA graph, and a breakdown with forward and backward.
  bool has_phases() const;
};

class Evidence {
 public:
  // Takes logs (with a label each); trials without a config, and a run added before (the same
  // trial id, process and first step), are skipped with a note.
  void add(std::string label, std::shared_ptr<const protocol::TrialLog> log);
  // The same in two parts, so a caller can keep measured trials (the GUI measures each stored
  // trial once): measure() reads one log (nullopt and `why` when it has no hello with a
  // configuration); add() takes the result, skipping a run added before with a note.
  static std::optional<MeasuredTrial> measure(std::string label, std::shared_ptr<const protocol::TrialLog> log,
                                              std::string* why = nullptr);
  void add(MeasuredTrial trial);
  static Evidence from_files(const std::vector<std::string>& paths);

  // A session's trial with its tags: one tagged kNoCalibrationTag is left out, said in the notes.
  void add(std::string label, std::shared_ptr<const protocol::TrialLog> log, const std::vector<std::string>& tags);
  // A trial left out, with why ("X: not used: its model is unknown ..."): said with the notes.
  void skip(std::string why) { m_notes.push_back(std::move(why)); }
  // The note of a trial its owner keeps out (the GUI and the command line say the same).
  static std::string kept_out_note(const std::string& label);

  const std::vector<MeasuredTrial>& trials() const { return m_trials; }
  std::vector<const MeasuredTrial*> select(const std::function<bool(const MeasuredTrial&)>& keep) const;
  const std::vector<std::string>& notes() const { return m_notes; }

 private:
  std::vector<MeasuredTrial> m_trials;
  std::vector<std::string> m_notes;
  std::set<std::string> m_identities;  // runs already added
};

}  // namespace tunebench::predict

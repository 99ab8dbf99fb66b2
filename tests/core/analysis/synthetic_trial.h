// Synthetic trials for the analysis tests: events built by hand, written as wire lines with the
// protocol writer and read back with the protocol reader, so the tests see exactly what a
// worker's log would give them. Intervals are given relative to their step's start.
#pragma once

#include <string>
#include <vector>

#include "core/config/trial_config.h"
#include "core/protocol/events.h"
#include "core/protocol/trial_log.h"

namespace tunebench::testing {

// An interval on the phase's default lane (data wait and h2d: host; collectives: comm; else compute).
protocol::Interval iv(protocol::Phase phase, int64_t start_us, int64_t end_us, int64_t bytes = 0,
                      double busbw_gbps = 0);
protocol::Interval iv_on(protocol::Lane lane, protocol::Phase phase, int64_t start_us, int64_t end_us);

class SyntheticTrial {
 public:
  SyntheticTrial(std::string id, config::TrialConfig config, std::string device = "NVIDIA H200",
                 int64_t device_memory_bytes = 150'000'000'000);
  void set_parameters(int64_t parameters) { m_parameters = parameters; }
  void set_memory(int64_t peak_bytes, int64_t alloc_retries) {
    m_peak_bytes = peak_bytes;
    m_alloc_retries = alloc_retries;
  }
  // One step of one rank starting at t0 + index * step_us (t0 is fixed); intervals relative to its start.
  protocol::Step& add_step(int rank, int64_t index, int64_t step_us, std::vector<protocol::Interval> relative,
                           int64_t tokens, bool warmup = false);
  // `warmup` + `measured` identical steps on every rank (world_size of the config).
  void add_steps(int64_t warmup, int64_t measured, int64_t step_us, const std::vector<protocol::Interval>& relative,
                 int64_t tokens_per_rank);
  void add_error(int rank, std::string kind, std::string message);
  // An NVML sample of GPU `rank` at t0 + offset_us (step i of step_us starts at t0 + i * step_us).
  void add_gpu_sample(int rank, int64_t offset_us, double util_pct);

  std::string jsonl() const;       // hello and model of every rank, then steps, errors, done
  protocol::TrialLog log() const;  // jsonl() read back through protocol::EventReader

 private:
  std::string m_id;
  config::TrialConfig m_config;
  std::string m_device;
  int64_t m_device_memory_bytes;
  int64_t m_parameters = 0;
  int64_t m_peak_bytes = 1'000'000'000;
  int64_t m_alloc_retries = 0;
  std::vector<protocol::Event> m_body;  // steps and errors in order
};

// Reads wire lines back into a TrialLog.
protocol::TrialLog parse_log(const std::string& jsonl);

}  // namespace tunebench::testing

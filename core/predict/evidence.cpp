#include "core/predict/evidence.h"

#include "core/config/known_settings.h"
#include "core/config/script.h"

#include <filesystem>

namespace tunebench::predict {

namespace {
// Trial id, rank 0's process id and its first event time: the same for the same run, wherever it
// was stored.
std::string run_identity(const protocol::TrialLog& log) {
  for (const auto& [rank, r] : log.ranks) {
    if (!r.hello) continue;
    const int64_t first = r.steps.empty() ? 0 : r.steps.front().start_us;
    return log.trial + "|" + std::to_string(r.hello->pid) + "|" + r.hello->host + "|" + std::to_string(first);
  }
  return {};
}
}  // namespace

bool MeasuredTrial::has_steps() const { return !probe && metrics.measured_steps > 0 && !metrics.oom; }

bool MeasuredTrial::has_phases() const {
  // A CUDA graph's step is one replay; with optimizer_overlap the backward's interval holds most of
  // the update: neither separates the phases the calibration fits.
  return has_steps() && !config::uses_cuda_graph(config.compile) && !config.optimizer_overlap &&
         metrics.breakdown[analysis::Part::Forward] > 0 && metrics.breakdown[analysis::Part::Backward] > 0;
}

void Evidence::add(std::string label, std::shared_ptr<const protocol::TrialLog> log) {
  if (!log) return;
  std::string why;
  if (auto t = measure(std::move(label), std::move(log), &why))
    add(std::move(*t));
  else
    m_notes.push_back(why);
}

void Evidence::add(std::string label, std::shared_ptr<const protocol::TrialLog> log,
                   const std::vector<std::string>& tags) {
  for (const auto& tag : tags)
    if (tag == kNoCalibrationTag) {
      skip(kept_out_note(label));
      return;
    }
  add(std::move(label), std::move(log));
}

std::string Evidence::kept_out_note(const std::string& label) {
  return label + ": not used: kept out of predictions (Trial > Use for predictions; tag \"" +
         std::string(kNoCalibrationTag) + "\")";
}

std::optional<MeasuredTrial> Evidence::measure(std::string label, std::shared_ptr<const protocol::TrialLog> log,
                                               std::string* why) {
  if (!log) return std::nullopt;
  MeasuredTrial t;
  t.label = std::move(label);
  t.log = log;
  const nlohmann::json cfg = log->config();
  if (cfg.is_null()) {
    if (why) *why = t.label + ": no hello with a configuration, not used";
    return std::nullopt;
  }
  const auto parsed = config::from_json(cfg);
  t.config = parsed.config;
  if (config::is_script(t.config)) {  // another model entirely: it calibrates nothing of the benchmark's
    if (why) *why = t.label + ": your own script, not the benchmark model; not used";
    return std::nullopt;
  }
  // The step model reads the model's shape and the step's work: a trial that does not say them
  // (an imported trace with unknown settings) calibrates nothing, whatever its device (issue 44:
  // a ResNet trace moved a 7B prediction).
  for (const char* key : {"model", "dim", "layers", "heads", "ffn", "vocab", "micro_batch", "seq_len", "grad_accum",
                          "amp", "compile", "checkpointing", "strategy", "world_size"})
    if (!config::is_known(cfg, key)) {
      if (why)
        *why = t.label + ": not used: its " + key +
               " is unknown (an imported trace); fill in its settings (Trial > Settings…) to let it calibrate";
      return std::nullopt;
    }
  for (const auto& [rank, r] : log->ranks) {
    if (r.hello) {
      t.device = r.hello->device;
      t.cuda = r.hello->device_kind == "cuda";
      t.device_memory_bytes = r.hello->device_memory_bytes;
      break;
    }
  }
  for (const auto& [rank, r] : log->ranks)
    if (!r.probes.empty()) t.probe = true;
  t.gpu = t.cuda ? hardware::find_gpu(t.device) : nullptr;
  t.transport = transport_key(*log);
  t.metrics = analysis::analyze(*log);
  if (!t.metrics.config) t.metrics.config = t.config;
  return t;
}

void Evidence::add(MeasuredTrial trial) {
  if (!trial.log) return;
  // The same run reached us twice (a log file and the session it was imported into): keep one.
  const std::string identity = run_identity(*trial.log);
  if (!identity.empty() && !m_identities.insert(identity).second) {
    m_notes.push_back(trial.label + ": the same run as a trial already added, skipped");
    return;
  }
  m_trials.push_back(std::move(trial));
}

Evidence Evidence::from_files(const std::vector<std::string>& paths) {
  Evidence e;
  for (const auto& path : paths) {
    auto log = std::make_shared<protocol::TrialLog>(protocol::read_trial_log_file(path));
    e.add(std::filesystem::path(path).stem().string(), std::move(log));
  }
  return e;
}

std::vector<const MeasuredTrial*> Evidence::select(const std::function<bool(const MeasuredTrial&)>& keep) const {
  std::vector<const MeasuredTrial*> out;
  for (const auto& t : m_trials)
    if (keep(t)) out.push_back(&t);
  return out;
}

}  // namespace tunebench::predict

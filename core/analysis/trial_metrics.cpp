#include "core/analysis/trial_metrics.h"

#include "core/config/script.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "core/analysis/format.h"
#include "core/analysis/step_time.h"
#include "core/analysis/throughput.h"
#include "core/config/known_settings.h"
#include "core/metrics/bus_bandwidth.h"
#include "core/metrics/energy.h"
#include "core/metrics/gpu_counters.h"
#include "core/metrics/flops.h"
#include "core/metrics/spans.h"
#include "core/hardware/hardware.h"

namespace tunebench::analysis {

using protocol::Phase;

namespace {

bool is_gradient_collective(Phase p) { return p == Phase::AllReduce || p == Phase::ReduceScatter; }

Spread scaled(Spread s, double k) {
  for (double* v : {&s.median, &s.p25, &s.p75, &s.mean, &s.min, &s.max})
    *v *= k;
  return s;
}

const protocol::Hello* first_hello(const protocol::TrialLog& log) {
  for (const auto& [rank, r] : log.ranks)
    if (r.hello) return &*r.hello;
  return nullptr;
}

const protocol::ModelInfo* first_model(const protocol::TrialLog& log) {
  for (const auto& [rank, r] : log.ranks)
    if (r.model) return &*r.model;
  return nullptr;
}

struct RankSample {
  int rank;
  const protocol::Step* step;
  PhaseBreakdown breakdown;
};

// The rank whose work sets the step: among the ranks whose step is within kCriticalTolerance of
// the longest, the busiest one (least exposed communication + idle, i.e. least waiting for the
// others), then the lowest rank. Synchronised ranks end their steps together; the one the others
// waited for is the critical path.
constexpr double kCriticalTolerance = 0.01;

const RankSample* critical_rank(const std::vector<RankSample>& samples) {
  int64_t longest = 0;
  for (const auto& smp : samples) longest = std::max(longest, smp.breakdown.step_us);
  auto busy = [](const PhaseBreakdown& b) {
    int64_t idle = 0;
    for (Part p : kIdleParts) idle += b[p];
    return b.step_us - b.exposed_comm_us() - idle - b[Part::DependencyWait];
  };
  const RankSample* crit = nullptr;
  for (const auto& smp : samples) {
    if (static_cast<double>(smp.breakdown.step_us) < (1.0 - kCriticalTolerance) * static_cast<double>(longest)) continue;
    if (!crit || busy(smp.breakdown) > busy(crit->breakdown)) crit = &smp;
  }
  return crit;
}

// ms per step of each label of one GPU-idle phase over `steps`, largest first, at most kTopOps: the
// time the breakdown gives that part (a gap's time under a data wait or a copy is not counted).
std::vector<std::pair<std::string, double>> top_labels(const std::vector<const protocol::Step*>& steps, Phase phase) {
  std::map<std::string, double> ms;
  for (const protocol::Step* s : steps) {
    std::vector<metrics::Span> host;
    for (const auto& in : s->intervals)
      if (in.lane == protocol::Lane::Host) host.push_back({in.start_us, in.end_us});
    for (const auto& in : s->intervals)
      if (in.phase == phase)
        ms[in.label] += static_cast<double>(metrics::uncovered_us({{in.start_us, in.end_us}}, host)) / 1000.0;
  }
  std::vector<std::pair<std::string, double>> out;
  for (auto& [name, v] : ms)
    if (v > 0) out.emplace_back(name, v / static_cast<double>(std::max<size_t>(1, steps.size())));
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  if (out.size() > kTopOps) out.resize(kTopOps);
  return out;
}

}  // namespace

double MeanBreakdown::idle_ms() const {
  double v = 0;
  for (Part p : kIdleParts) v += (*this)[p];
  return v;
}

MeanBreakdown mean_of(const std::vector<PhaseBreakdown>& steps) {
  MeanBreakdown m;
  if (steps.empty()) return m;
  const double n = static_cast<double>(steps.size());
  for (const auto& b : steps) {
    for (size_t i = 0; i < kPartCount; ++i)
      m.part_ms[i] += static_cast<double>(b.part_us[i]) / 1000.0 / n;
    m.step_ms += static_cast<double>(b.step_us) / 1000.0 / n;
    m.comm_ms += static_cast<double>(b.comm_us) / 1000.0 / n;
    m.recompute_ms += static_cast<double>(b.recompute_us) / 1000.0 / n;
    m.compute_ms += static_cast<double>(b.compute_us) / 1000.0 / n;
  }
  return m;
}

MeanBreakdown scaled_to(const MeanBreakdown& b, double step_ms) {
  if (b.step_ms <= 0) return b;
  const double k = step_ms / b.step_ms;
  MeanBreakdown out = b;
  for (double& v : out.part_ms) v *= k;
  out.step_ms = step_ms;
  out.comm_ms *= k;
  out.recompute_ms *= k;
  out.compute_ms *= k;
  return out;
}

bool samples_represent(const MeanBreakdown& sampled, const MeanBreakdown& unsampled) {
  if (sampled.step_ms <= 0 || unsampled.step_ms <= 0) return false;
  const MeanBreakdown s = scaled_to(sampled, unsampled.step_ms);
  for (Part p : {Part::DataWait, Part::HostToDevice, Part::ExposedComm})
    if (std::abs(s[p] - unsampled[p]) > kSampleTolerance * unsampled.step_ms) return false;
  return true;
}

std::vector<StepBreakdown> rank_breakdowns(const protocol::TrialLog& log, int rank) {
  std::vector<StepBreakdown> out;
  for (const protocol::Step* s : log.measured_steps(rank)) out.push_back({s->step, breakdown_of(*s)});
  return out;
}

std::map<std::string, std::string> environment_switches(const protocol::TrialLog& log) {
  std::map<std::string, std::string> out;
  for (const auto& [rank, r] : log.ranks)
    if (r.hello)
      for (const auto& [k, v] : r.hello->env)
        if (k.rfind("TUNEBENCH_", 0) == 0) out.emplace(k, v);
  return out;
}

TrialMetrics analyze(const protocol::TrialLog& log) { return analyze_pooled({&log}); }

TrialMetrics analyze_pooled(const std::vector<const protocol::TrialLog*>& repeats) {
  TrialMetrics m;
  if (repeats.empty()) return m;
  const protocol::TrialLog& first = *repeats.front();
  m.trial = first.trial;
  m.world_size = first.world_size();
  if (const auto* hello = first_hello(first)) {
    m.device = hello->device;
    m.device_memory_bytes = hello->device_memory_bytes;
  }
  {
    std::map<std::string, int> per_host;
    for (const auto& [rank, r] : first.ranks)
      if (r.hello) m.ranks_per_host = std::max(m.ranks_per_host, ++per_host[r.hello->host]);
  }
  m.switches = environment_switches(first);
  if (const auto cfg = first.config(); cfg.is_object()) {
    auto parsed = config::from_json(cfg);
    m.config = parsed.config;
    for (const auto& p : parsed.problems)
      m.notes.push_back("config: " + p.key + ": " + p.message);
    m.unknown_knobs = config::unknown_knobs(cfg);
    if (!m.unknown_knobs.empty())
      m.notes.push_back(config::is_script(m.config.value())
                            ? "your own script: " + std::to_string(m.unknown_knobs.size()) +
                                  " knobs are its own, not seen by the probe; figures and suggestions that need them "
                                  "are left out"
                            : std::to_string(m.unknown_knobs.size()) + " of " +
                                  std::to_string(config::knobs().size() - 1) +
                                  " knobs are unknown (an imported trace); figures and suggestions that need them are "
                                  "left out");
  }
  const protocol::ModelInfo* model = first_model(first);
  if (model) m.parameters = model->parameters;
  m.label = m.config && !m.config->name.empty() ? m.config->name : (m.trial.empty() ? "trial" : m.trial);

  std::vector<double> step_ms, comm_ms, exposed_ms, wait_ms, tokens, step_samples, grad_bytes, comm_bytes, bus_bytes;
  std::vector<PhaseBreakdown> critical, critical_sampled, critical_unsampled;
  std::vector<double> exposed_unsampled_ms;
  std::vector<double> busy_share, exposed_sampled_ms;
  std::vector<const protocol::Step*> sampled_steps;
  std::map<int, std::vector<PhaseBreakdown>> per_rank, per_rank_sampled, per_rank_unsampled;
  std::map<int, std::vector<double>> per_rank_ms;
  std::vector<std::pair<int64_t, double>> first_repeat_steps;  // (step index, ms) for the representative
  double bw_weighted = 0, bw_bytes = 0;
  double util_sum = 0;
  int64_t util_n = 0;
  std::map<int, std::pair<double, int64_t>> cpu_by_rank;  // sum and count of process CPU samples
  bool any_interval = false;

  for (size_t ri = 0; ri < repeats.size(); ++ri) {
    const protocol::TrialLog& log = *repeats[ri];
    m.repeat_ids.push_back(log.trial);
    const int world = log.world_size();
    std::map<int64_t, std::vector<RankSample>> by_step;
    int64_t window_start = std::numeric_limits<int64_t>::max(), window_end = 0;
    for (const auto& [rank, r] : log.ranks) {
      for (const protocol::Step* s : log.measured_steps(rank)) {
        by_step[s->step].push_back({rank, s, breakdown_of(*s)});
        window_start = std::min(window_start, s->start_us);
        window_end = std::max(window_end, s->end_us);
        any_interval = any_interval || !s->intervals.empty();
        for (const auto& in : s->intervals) {
          if (in.lane != protocol::Lane::Comm || in.bytes <= 0) continue;
          const double bw = in.busbw_gbps > 0
                                ? in.busbw_gbps
                                : metrics::bus_bandwidth_gbps(in.phase, in.bytes, in.duration_us(), world);
          bw_weighted += static_cast<double>(in.bytes) * bw;
          bw_bytes += static_cast<double>(in.bytes);
        }
      }
      for (const auto& s : r.steps) {  // peak memory is cumulative since start: warm-up counts too
        m.peak_bytes = std::max(m.peak_bytes, s.memory.peak_bytes);
        m.alloc_retries = std::max(m.alloc_retries, s.memory.alloc_retries);
      }
      if (r.done) m.peak_bytes = std::max(m.peak_bytes, r.done->summary.peak_bytes);
      for (const auto& e : r.errors) {
        m.errors.push_back(e.value.kind + ": " + e.value.message);
        if (e.value.kind == "oom") m.oom = true;
      }
    }
    for (const auto& [rank, r] : log.ranks)  // GPU samples taken while measured steps ran, any rank
      for (const auto& smp : r.samples)
        if (smp.value.index >= 0 && smp.value.util_pct && smp.t_us >= window_start && smp.t_us <= window_end) {
          util_sum += *smp.value.util_pct;
          ++util_n;
        }
    for (const auto& [rank, r] : log.ranks)  // the ranks' processes (/proc samples): CPU during measured steps, RSS
      for (const auto& smp : r.samples) {
        if (smp.value.index >= 0) continue;
        if (smp.value.rss_bytes) m.rss_peak_bytes = std::max(m.rss_peak_bytes, *smp.value.rss_bytes);
        if (smp.value.cpu_pct && smp.t_us >= window_start && smp.t_us <= window_end) {
          cpu_by_rank[rank].first += *smp.value.cpu_pct;
          ++cpu_by_rank[rank].second;
        }
      }
    if (world > 1 && log.ranks.size() < static_cast<size_t>(world))
      m.notes.push_back("only " + std::to_string(log.ranks.size()) + " of " + std::to_string(world) +
                        " ranks reported events" + (log.trial.empty() ? "" : " in trial " + log.trial));

    const auto step_times = metrics::step_times_ms(log);
    const int64_t configured_tokens = configured_tokens_per_rank_step(log);
    const int64_t configured_samples = configured_samples_per_rank_step(log);
    for (const auto& [index, samples] : by_step) {
      const RankSample* crit = critical_rank(samples);
      int64_t tokens_total = 0;
      for (const auto& smp : samples) {
        tokens_total += metrics::rank_step_tokens(*smp.step, configured_tokens);  // metrics/step_time.h
        per_rank[smp.rank].push_back(smp.breakdown);
        (smp.breakdown.gpu_sampled ? per_rank_sampled : per_rank_unsampled)[smp.rank].push_back(smp.breakdown);
        per_rank_ms[smp.rank].push_back(static_cast<double>(smp.breakdown.step_us) / 1000.0);
      }
      const PhaseBreakdown& b = crit->breakdown;
      critical.push_back(b);
      if (b.gpu_sampled) {
        critical_sampled.push_back(b);
        sampled_steps.push_back(crit->step);
        exposed_sampled_ms.push_back(static_cast<double>(b.exposed_comm_us()) / 1000.0);
        if (b.step_us > 0)
          busy_share.push_back(std::min(1.0, static_cast<double>(b.gpu_busy_us) / static_cast<double>(b.step_us)));
      } else {
        critical_unsampled.push_back(b);
        exposed_unsampled_ms.push_back(static_cast<double>(b.exposed_comm_us()) / 1000.0);
      }
      const double ms = step_times.at(index);  // the step time (step_time.h), not the critical rank's own
      step_ms.push_back(ms);
      if (ri == 0) first_repeat_steps.emplace_back(index, ms);
      comm_ms.push_back(static_cast<double>(b.comm_us) / 1000.0);
      exposed_ms.push_back(static_cast<double>(b.exposed_comm_us()) / 1000.0);
      wait_ms.push_back(static_cast<double>(b[Part::DataWait]) / 1000.0);
      tokens.push_back(static_cast<double>(tokens_total));
      step_samples.push_back(static_cast<double>(configured_samples) * static_cast<double>(samples.size()));
      double g = 0, c = 0, bus = 0;
      for (const auto& in : crit->step->intervals) {
        if (in.lane != protocol::Lane::Comm) continue;
        c += static_cast<double>(in.bytes);
        if (is_gradient_collective(in.phase)) g += static_cast<double>(in.bytes);
        bus += static_cast<double>(in.bytes) * metrics::bus_factor(in.phase, world);
      }
      grad_bytes.push_back(g);
      comm_bytes.push_back(c);
      bus_bytes.push_back(bus);
    }
  }

  m.measured_steps = static_cast<int64_t>(step_ms.size());
  m.step_ms = spread_of(step_ms);
  m.tokens_per_step = spread_of(tokens).median;
  m.tokens_per_s_total = throughput_of(m.step_ms, m.tokens_per_step);
  m.tokens_per_s_per_gpu = scaled(m.tokens_per_s_total, 1.0 / std::max(1, m.world_size));
  m.samples_per_step = spread_of(step_samples).median;
  m.samples_per_s_total = throughput_of(m.step_ms, m.samples_per_step);
  m.samples_per_s_per_gpu = scaled(m.samples_per_s_total, 1.0 / std::max(1, m.world_size));
  // Kernel-sampled steps, where there are any, give the breakdown: their parts are measured on the
  // device; the other steps' compute phases run from first kernel to last, gaps included. Where
  // both kinds exist the sampled ones stand for the run only when they agree with the others
  // (samples_represent), scaled to the unsampled step; else the unsampled timeline, said so.
  m.sampled_steps = static_cast<int64_t>(critical_sampled.size());
  const MeanBreakdown sampled_mean = mean_of(critical_sampled), unsampled_mean = mean_of(critical_unsampled);
  if (critical_sampled.empty())
    m.sample_use = SampleUse::None;
  else if (critical_unsampled.empty())
    m.sample_use = SampleUse::All;
  else
    m.sample_use = samples_represent(sampled_mean, unsampled_mean) ? SampleUse::Scaled : SampleUse::NotRepresentative;
  switch (m.sample_use) {
    case SampleUse::None:
      m.breakdown = mean_of(critical);
      break;
    case SampleUse::All:
      m.breakdown = sampled_mean;
      break;
    case SampleUse::Scaled:
      m.breakdown = scaled_to(sampled_mean, unsampled_mean.step_ms);
      break;
    case SampleUse::NotRepresentative:
      m.breakdown = unsampled_mean;
      m.notes.push_back("kernel samples not representative at this step length: the " +
                        std::to_string(critical_sampled.size()) + " kernel-sampled steps take " +
                        format_ms(sampled_mean.step_ms) + " (mean) against " + format_ms(unsampled_mean.step_ms) +
                        " unsampled, and their data wait, host-to-device or exposed communication differ by more "
                        "than " + format_pct(kSampleTolerance) +
                        " of the step once scaled; the breakdown is the unsampled steps' timeline (GPU busy unknown)");
      break;
  }
  const bool sampled = m.sample_use == SampleUse::All || m.sample_use == SampleUse::Scaled;
  for (const auto& [rank, bs] : per_rank) {
    const auto s_it = per_rank_sampled.find(rank), u_it = per_rank_unsampled.find(rank);
    MeanBreakdown b = mean_of(bs);
    if (m.sample_use == SampleUse::All && s_it != per_rank_sampled.end()) b = mean_of(s_it->second);
    if (m.sample_use == SampleUse::Scaled && s_it != per_rank_sampled.end() && u_it != per_rank_unsampled.end())
      b = scaled_to(mean_of(s_it->second), mean_of(u_it->second).step_ms);
    if (m.sample_use == SampleUse::NotRepresentative && u_it != per_rank_unsampled.end()) b = mean_of(u_it->second);
    m.ranks.push_back({rank, spread_of(per_rank_ms[rank]), b});
  }
  if (sampled) {
    if (!busy_share.empty()) m.gpu_busy_share = spread_of(busy_share).median;
    const double k = m.sample_use == SampleUse::Scaled && sampled_mean.step_ms > 0
                         ? unsampled_mean.step_ms / sampled_mean.step_ms
                         : 1.0;
    m.host_wait_ops = top_labels(sampled_steps, Phase::HostWait);
    m.sync_ops = top_labels(sampled_steps, Phase::SyncWait);
    m.dependency_ops = top_labels(sampled_steps, Phase::DependencyWait);
    for (auto* ops : {&m.host_wait_ops, &m.sync_ops, &m.dependency_ops})
      for (auto& [name, ms] : *ops) ms *= k;
    for (double& v : exposed_sampled_ms) v *= k;
  }
  m.collectives = collective_split(repeats);
  m.comm_ms = spread_of(comm_ms);
  m.exposed_comm_ms = spread_of(sampled                                          ? exposed_sampled_ms
                                : m.sample_use == SampleUse::NotRepresentative ? exposed_unsampled_ms
                                                                               : exposed_ms);
  m.data_wait_ms = spread_of(wait_ms);
  if (m.breakdown.comm_ms > 0) m.hidden_fraction = 1.0 - m.breakdown[Part::ExposedComm] / m.breakdown.comm_ms;
  if (bw_bytes > 0) m.busbw_gbps = bw_weighted / bw_bytes;
  m.grad_bytes_per_step = static_cast<int64_t>(std::llround(spread_of(grad_bytes).median));
  m.comm_bytes_per_step = static_cast<int64_t>(std::llround(spread_of(comm_bytes).median));
  m.bus_bytes_per_step = spread_of(bus_bytes).median;
  if (m.busbw_gbps && m.bus_bytes_per_step > 0)
    m.comm_floor_ms = metrics::comm_floor_ms(m.bus_bytes_per_step, *m.busbw_gbps);
  if (m.device_memory_bytes > 0 && m.peak_bytes > 0)
    m.peak_fraction = static_cast<double>(m.peak_bytes) / static_cast<double>(m.device_memory_bytes);
  if (util_n > 0) m.gpu_util_pct = util_sum / static_cast<double>(util_n);
  if (!cpu_by_rank.empty()) {
    double total = 0;
    for (const auto& [rank, sn] : cpu_by_rank) total += sn.first / static_cast<double>(sn.second);
    m.cpu_use_pct = total;
  }
  if (const metrics::TrialEnergy e = metrics::trial_energy(first); e.ok()) {
    m.joules_per_step = e.joules_per_step;
    m.tokens_per_joule = e.tokens_per_joule;
    m.energy_error_bound = e.error_bound;
  } else {
    m.energy_problem = e.problem;
  }
  const metrics::TrialActivity activity = metrics::trial_activity(first);
  m.sm_activity_pct = activity.sm_activity_pct;
  m.tensor_activity_pct = activity.tensor_activity_pct;
  m.activity_problem = activity.problem;

  // FLOPs per token: the PaLM formula from the configuration; the worker's own figure otherwise.
  if (m.knows({"dim", "layers", "heads", "ffn", "vocab", "seq_len"})) {
    const int64_t n_matmul =
        model && model->matmul_parameters > 0
            ? model->matmul_parameters
            : metrics::llama_matmul_parameters(m.config->dims.layers, m.config->dims.dim, m.config->dims.kv_dim(),
                                               m.config->dims.ffn, m.config->dims.vocab);
    m.flops_per_token =
        metrics::palm_flops_per_token(n_matmul, m.config->dims.layers, m.config->dims.dim, m.config->seq_len);
  } else if (model && model->flops_per_token > 0) {
    m.flops_per_token = model->flops_per_token;
  }
  m.peak_tflops = hardware::mfu_peak_tflops(m.device);
  if (m.flops_per_token && m.tokens_per_s_per_gpu.n > 0)
    m.mfu = metrics::model_flops_utilisation(m.tokens_per_s_per_gpu.median, *m.flops_per_token, m.peak_tflops);

  double best = std::numeric_limits<double>::max();
  for (const auto& [index, ms] : first_repeat_steps)
    if (std::abs(ms - m.step_ms.median) < best) {
      best = std::abs(ms - m.step_ms.median);
      m.representative_step = index;
    }
  if (m.measured_steps > 0 && !any_interval)
    m.notes.push_back("no phase intervals were recorded (timing off?): the breakdown shows the whole step as idle");
  if (m.measured_steps == 0) m.notes.push_back("no measured steps");
  return m;
}

bool TrialMetrics::knows(std::initializer_list<std::string_view> keys) const {
  if (!config) return false;
  for (std::string_view k : keys)
    if (std::find(unknown_knobs.begin(), unknown_knobs.end(), k) != unknown_knobs.end()) return false;
  return true;
}

std::optional<double> scaling_efficiency(const TrialMetrics& trial, const TrialMetrics& single) {
  // Between trials of one world size there is no scaling to speak of (two single-GPU trials gave
  // "809.9 %": the ratio of their throughputs).
  if (trial.world_size == single.world_size) return std::nullopt;
  if (trial.tokens_per_s_per_gpu.n == 0 || single.tokens_per_s_per_gpu.n == 0 ||
      single.tokens_per_s_per_gpu.median <= 0)
    return std::nullopt;
  return trial.tokens_per_s_per_gpu.median / single.tokens_per_s_per_gpu.median;
}

WorkRate work_rate(const TrialMetrics& m) {
  if (m.tokens_per_step <= 0 && m.samples_per_step > 0)
    return {m.samples_per_step, m.samples_per_s_total, m.samples_per_s_per_gpu, "samples"};
  return {m.tokens_per_step, m.tokens_per_s_total, m.tokens_per_s_per_gpu, "tokens"};
}

}  // namespace tunebench::analysis

#include "tests/core/investigate/planted_trials.h"

#include <memory>

#include "core/store/event_log_import.h"
#include "core/store/session_store.h"
#include "tests/core/analysis/synthetic_trial.h"

namespace tunebench::testing {
namespace {
protocol::TrialStatus ts_done() { return protocol::TrialStatus::Done; }
}  // namespace

using protocol::Phase;

protocol::TrialLog planted_trial(const config::TrialConfig& c, const PlantedModel& m, std::mt19937_64& rng,
                                 const std::string& id) {
  std::normal_distribution<double> step_n(0.0, m.step_noise), run_n(0.0, m.run_noise);
  const double run = 1.0 + run_n(rng);
  const double mb = static_cast<double>(c.micro_batch * c.grad_accum);
  const double kernels = c.compile == config::Compile::Fused ? m.compile_speedup : 1.0;
  // A CPU config runs on "cpu" as the worker's hello says; any other on the default GPU.
  SyntheticTrial t = c.device == config::Device::Cpu ? SyntheticTrial(id, c, "cpu", 0) : SyntheticTrial(id, c);
  t.set_memory(static_cast<int64_t>(1e9 * mb), 0);
  for (int64_t s = 0; s < c.steps; ++s) {
    for (int rank = 0; rank < c.world_size; ++rank) {
      const double jitter = run * (1.0 + step_n(rng));
      const double data = c.num_workers == 0 ? m.data_wait_ms_no_workers : 0.2;
      const double fwd = m.forward_ms_per_seq * mb / kernels * jitter;
      double bwd = m.backward_ms_per_seq * mb / kernels * jitter;
      if (c.checkpointing) bwd += fwd;
      double comm = 0;
      if (c.world_size > 1 && c.strategy == config::Strategy::Ddp)
        comm = m.exposed_comm_ms * (c.compression == config::Compression::None ? 1.0 : 0.5);
      const auto us = [](double ms) { return static_cast<int64_t>(ms * 1000.0); };
      int64_t at = 0;
      std::vector<protocol::Interval> ivs;
      ivs.push_back(iv(Phase::DataWait, at, at + us(data)));
      at += us(data);
      ivs.push_back(iv(Phase::Forward, at, at + us(fwd)));
      at += us(fwd);
      ivs.push_back(iv(Phase::Backward, at, at + us(bwd)));
      at += us(bwd);
      if (comm > 0) {
        ivs.push_back(iv(Phase::AllReduce, at, at + us(comm), 100'000'000));
        at += us(comm);
      }
      ivs.push_back(iv(Phase::Optimizer, at, at + us(m.optimizer_ms * jitter)));
      at += us(m.optimizer_ms * jitter);
      t.add_step(rank, s, at, ivs, c.tokens_per_rank_step(), s < c.warmup);
    }
  }
  return t.log();
}

investigate::TrialExecutor planted_executor(const std::string& session_path, PlantedModel model, uint64_t seed,
                                            int* calls) {
  auto rng = std::make_shared<std::mt19937_64>(seed);
  return [=](const investigate::TrialRequest& r) {
    if (calls) ++*calls;
    auto s = store::SessionStore::open(session_path);
    const auto log = planted_trial(r.config, model, *rng, "planted-" + std::to_string(s.list_trials().size() + 1));
    const auto res = store::import_trial_log(s, log, r.name, "planted");
    s.set_trial_tags(res.trial_id, r.tags);
    // Synthetic logs carry no done events (the import would call them interrupted): the planted
    // "run" ended by itself.
    s.set_trial_status(res.trial_id, ts_done());
    investigate::TrialOutcome out;
    out.trial_id = res.trial_id;
    out.status = s.trial(res.trial_id).status;
    return out;
  };
}

}  // namespace tunebench::testing

// predict_scenario's link for CPU ranks: the catalogue has no CPU peaks (no step time), but a link
// probe between CPU processes (Gloo) in the evidence is the link of a multi-rank CPU scenario, and
// the prediction says so; without one, or for another transport, there is no link.
#include "core/predict/predictor.h"

#include <gtest/gtest.h>

#include <cmath>

#include "core/predict/attention.h"

namespace tp = tunebench::predict;
namespace pr = tunebench::protocol;
namespace tc = tunebench::config;

namespace {

std::shared_ptr<pr::TrialLog> cpu_probe(const std::map<std::string, std::string>& env) {
  tc::TrialConfig c;
  c.device = tc::Device::Cpu;
  c.strategy = tc::Strategy::Ddp;
  c.world_size = 2;
  c.nccl_env = env;
  auto log = std::make_shared<pr::TrialLog>();
  log->trial = "probe-cpu";
  for (int rank : {0, 1}) {
    pr::Hello h;
    h.host = "here";
    h.pid = 100 + rank;
    h.world_size = 2;
    h.device = "cpu";
    h.device_kind = "cpu";
    h.backend = "gloo";
    h.env = env;
    h.config = tc::to_json(c);
    log->ranks[rank].hello = h;
    for (int64_t bytes : {int64_t{1} << 20, int64_t{1} << 22}) {
      pr::LinkProbe p;
      p.bytes = bytes;
      p.world_size = 2;
      p.time_us = 1000;
      p.busbw_gbps = bytes == (1 << 20) ? 1.5 : 2.5;
      log->ranks[rank].probes.push_back(p);
    }
  }
  return log;
}

tp::Scenario cpu_ddp(int world) {
  tp::Scenario s;
  s.config = *tc::trial_preset("cpu-tiny-ddp");
  s.config.device = tc::Device::Cpu;
  s.config.world_size = world;
  return s;
}

}  // namespace

TEST(Predictor, CpuRanksTakeTheirLinkFromAProbeOfThisTransport) {
  tp::Evidence e;
  e.add("link probe, 2 x cpu", cpu_probe({}));
  ASSERT_EQ(e.trials().size(), 1u);
  ASSERT_TRUE(e.trials()[0].probe);
  const auto p = tp::predict_scenario(cpu_ddp(2), e.select([](const tp::MeasuredTrial&) { return true; }));
  EXPECT_FALSE(p.step.has_value());  // no CPU peaks
  ASSERT_TRUE(p.link.has_value());
  EXPECT_TRUE(p.link->measured());
  EXPECT_EQ(p.link->name, "measured by a link probe");
  EXPECT_NEAR(p.link->busbw_at(double(1 << 22)), 2.5, 1e-9);
  ASSERT_FALSE(p.notes.empty());
  EXPECT_NE(p.notes.front().find("link: measured by a link probe (probe 'link probe, 2 x cpu', all-reduce at 2 sizes)"),
            std::string::npos)
      << p.notes.front();
}

TEST(Predictor, CpuRanksHaveNoLinkWithoutAProbeOfTheirTransport) {
  tp::Evidence e;
  e.add("probe without P2P", cpu_probe({{"NCCL_P2P_DISABLE", "1"}}));
  const auto basis = e.select([](const tp::MeasuredTrial&) { return true; });
  EXPECT_FALSE(tp::predict_scenario(cpu_ddp(2), basis).link.has_value());  // another transport key
  EXPECT_FALSE(tp::predict_scenario(cpu_ddp(2), {}).link.has_value());
  EXPECT_FALSE(tp::predict_scenario(cpu_ddp(1), basis).link.has_value());  // one rank moves nothing
}

TEST(Evidence, AMeasuredTrialCanBeKeptAndAddedLaterOnce) {
  std::string why;
  auto t = tp::Evidence::measure("probe", cpu_probe({}), &why);
  ASSERT_TRUE(t.has_value()) << why;
  EXPECT_TRUE(t->probe);
  EXPECT_EQ(t->device, "cpu");
  tp::Evidence e;
  e.add(*t);
  e.add(*t);  // the same run again
  EXPECT_EQ(e.trials().size(), 1u);
  ASSERT_EQ(e.notes().size(), 1u);
  EXPECT_NE(e.notes()[0].find("the same run"), std::string::npos);
  auto empty = std::make_shared<pr::TrialLog>();
  EXPECT_FALSE(tp::Evidence::measure("no hello", empty, &why).has_value());
  EXPECT_NE(why.find("no hello"), std::string::npos);
}

// Issue 44: fp32 with grouped-query attention printed "Step: inf ms" (the memory-efficient kernel,
// auto's only fp32 candidate, has no grouped measurement: it cannot run there). Auto falls back to
// the math as PyTorch does; the step is finite and says why.
TEST(Predictor, Fp32WithGroupedQueryAttentionIsPricedAsTheMath) {
  tp::Scenario s;
  s.config = *tc::trial_preset("7b-single");
  s.config.model = "custom";
  s.config.amp = tc::Amp::Fp32;
  s.config.dims.kv_heads = 8;
  s.gpu = "h200";
  const tp::Prediction p = tp::predict_scenario(s);
  ASSERT_TRUE(p.step.has_value());
  EXPECT_TRUE(std::isfinite(p.step->step_ms));
  EXPECT_GT(p.step->tokens_per_s_total, 0);
  const auto choice = tp::attention_choice(s.config, true);
  EXPECT_EQ(choice.kernel, tunebench::rules::AttentionKernel::Math);
  EXPECT_NE(choice.why.find("efficient cannot run head size 128 grouped"), std::string::npos) << choice.why;
  // Multi-head fp32 keeps the memory-efficient kernel.
  s.config.dims.kv_heads = 0;
  EXPECT_EQ(tp::attention_choice(s.config, true).kernel, tunebench::rules::AttentionKernel::Efficient);
}

// Issue 44: What if said "2 GPUs beat one here" at 1.05x for 7B DDP on two RTX 4090s, which does
// not fit in their memory. A configuration that does not fit gets "does not fit" and no speed
// verdict, in the one statement the CLI, the Prediction dock and What if all print.
TEST(Predictor, AConfigThatDoesNotFitGetsNoSpeedVerdict) {
  tp::Scenario s;
  s.config = *tc::trial_preset("7b-ddp");
  s.gpu = "rtx4090";
  s.link = "pcie4-nop2p";
  const tp::Prediction p = tp::predict_scenario(s);
  ASSERT_EQ(p.fit, tp::Fit::DoesNotFit);
  ASSERT_TRUE(p.scaling.has_value()) << "the speed-up is still computed (the step says 'if it fit')";
  EXPECT_FALSE(p.scaling->fits);
  EXPECT_FALSE(p.scaling->can_beat_single);
  EXPECT_EQ(p.scaling->statement.find("beat one"), std::string::npos) << p.scaling->statement;
  EXPECT_NE(p.scaling->statement.find("does not fit"), std::string::npos) << p.scaling->statement;

  // Where it fits, the verdict is given as before.
  s.config = *tc::trial_preset("7b-fsdp");
  tc::set_knob(s.config, "model", "1b");
  s.config.checkpointing = true;
  const tp::Prediction fits = tp::predict_scenario(s);
  ASSERT_NE(fits.fit, tp::Fit::DoesNotFit);
  ASSERT_TRUE(fits.scaling.has_value());
  EXPECT_TRUE(fits.scaling->fits);
  EXPECT_NE(fits.scaling->statement.find("beat one here"), std::string::npos) << fits.scaling->statement;
}

// The link probe as a launch: the probe's arguments reach the worker through every launcher's
// plan (local argv, the ssh node script run by /bin/sh, srun and sbatch), and the probe's trial
// config and name are made once for the GUI and the CLI.
#include "core/launch/link_probe.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace tl = tunebench::launch;
namespace tc = tunebench::config;

namespace {

tl::LaunchContext probe_context() {
  tl::LaunchContext ctx;
  ctx.trial_id = "probe-1";
  ctx.worker = "/opt/tb/bin/tunebench-worker";
  ctx.config_path = "/tmp/run/trial.json";
  ctx.events_socket = "/tmp/run/events.sock";
  ctx.tcp_events = "login1:40001";
  ctx.master_port = 29511;
  ctx.nonce = "n2";
  ctx.home = "/home/alice";
  ctx.link_probe = tl::LinkProbeRange{0.25, 4};
  return ctx;
}

const std::vector<std::string> kProbeArgs = {"--probe-link", "--probe-min-mb", "0.25", "--probe-max-mb", "4"};

tc::TrialConfig two_ranks() {
  tc::TrialConfig c;
  c.strategy = tc::Strategy::Ddp;
  c.world_size = 2;
  return c;
}

}  // namespace

TEST(LinkProbePlan, LocalRanksGetTheProbeArgumentsAfterTheCommonOnes) {
  const auto plan = tl::plan_launch(two_ranks(), probe_context());
  ASSERT_EQ(plan.processes.size(), 2u);
  for (const auto& p : plan.processes) {
    std::vector<std::string> expected = {"/opt/tb/bin/tunebench-worker", "--config", "/tmp/run/trial.json",
                                         "--events", "unix:/tmp/run/events.sock", "--trial", "probe-1"};
    expected.insert(expected.end(), kProbeArgs.begin(), kProbeArgs.end());
    EXPECT_EQ(p.argv, expected);
  }
  // Training (no probe) is unchanged: the common arguments only.
  auto ctx = probe_context();
  ctx.link_probe.reset();
  EXPECT_EQ(tl::plan_launch(two_ranks(), ctx).processes[0].argv.size(), 7u);
  EXPECT_TRUE(tl::worker_mode_arguments(ctx).empty());
}

TEST(LinkProbePlan, EverySshNodeAndEverySlurmTaskRunsTheProbe) {
  tc::TrialConfig c = two_ranks();
  c.launcher = tc::Launcher::Ssh;
  ASSERT_FALSE(tc::parse_ssh_hosts("gpu1 ranks=1; gpu2 ranks=1", c.ssh_hosts));
  for (int node = 0; node < 2; ++node)
    EXPECT_NE(tl::ssh_node_script(c, probe_context(), node)
                  .find("--trial probe-1 --probe-link --probe-min-mb 0.25 --probe-max-mb 4 </dev/null"),
              std::string::npos)
        << tl::ssh_node_script(c, probe_context(), node);
  c.launcher = tc::Launcher::Slurm;
  for (auto mode : {tc::SlurmMode::Srun, tc::SlurmMode::Sbatch}) {
    c.slurm_mode = mode;
    const auto plan = tl::plan_launch(c, probe_context());
    const std::string where = mode == tc::SlurmMode::Srun ? plan.processes[0].argv.back() : plan.files.back().second;
    EXPECT_NE(where.find("--trial probe-1 --probe-link --probe-min-mb 0.25 --probe-max-mb 4"), std::string::npos)
        << where;
  }
}

TEST(LinkProbeConfig, KeepsWhereAndHowTheRanksRunAndNothingOfTheModel) {
  tc::TrialConfig trial = *tc::trial_preset("7b-ddp");
  trial.world_size = 4;
  trial.nccl_env = {{"NCCL_P2P_DISABLE", "1"}};
  trial.collective_timeout_s = 77;
  trial.launcher = tc::Launcher::Ssh;
  ASSERT_FALSE(tc::parse_ssh_hosts("gpu1 ranks=2; alice@gpu2:2222 ranks=2", trial.ssh_hosts));
  trial.ssh_command = "ssh -J bastion";
  trial.remote_env = {{"LD_LIBRARY_PATH", "/opt/torch/lib"}};
  const tc::TrialConfig p = tl::link_probe_config(trial);
  EXPECT_TRUE(tc::validate(p).empty()) << tc::describe(tc::validate(p));
  EXPECT_EQ(p.world_size, 4);
  EXPECT_EQ(p.device, trial.device);
  EXPECT_EQ(p.strategy, tc::Strategy::Ddp);
  EXPECT_EQ(p.nccl_env, trial.nccl_env);
  EXPECT_EQ(p.collective_timeout_s, 77);
  EXPECT_EQ(p.launcher, tc::Launcher::Ssh);
  EXPECT_EQ(tc::format_ssh_hosts(p.ssh_hosts), tc::format_ssh_hosts(trial.ssh_hosts));
  EXPECT_EQ(p.ssh_command, "ssh -J bastion");
  EXPECT_EQ(p.remote_env, trial.remote_env);
  EXPECT_EQ(p.model, tc::TrialConfig{}.model);  // the worker builds no model in probe mode
  EXPECT_EQ(p.name, "link probe, 4 x cuda, NCCL_P2P_DISABLE=1");

  tc::TrialConfig cpu = *tc::trial_preset("cpu-tiny-ddp");
  cpu.device = tc::Device::Cpu;
  EXPECT_EQ(tl::link_probe_config(cpu).name, "link probe, 2 x cpu");  // what `tunebench-cli probe` names it
}

TEST(LinkProbeConfig, CountsTheSizesTheWorkerMeasures) {
  EXPECT_EQ(tl::link_probe_points({1, 1024}), 11);
  EXPECT_EQ(tl::link_probe_points({1, 4}), 3);
  EXPECT_EQ(tl::link_probe_points({0.25, 0.5}), 2);
  EXPECT_EQ(tl::link_probe_points({4, 1}), 0);
}

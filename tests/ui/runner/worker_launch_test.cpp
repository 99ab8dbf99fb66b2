// The GUI's side of launching: the worker's place (the rendezvous port is core/launch's free_local_port). What runs
// (argv, environment) is core/launch's plan, tested in tests/core/launch; here, that the runner's processes follow it.
#include <gtest/gtest.h>

#include "core/launch/launch_plan.h"
#include "ui/runner/worker_launch.h"

using namespace tunebench;
using namespace tunebench::ui;

TEST(WorkerLaunch, EnvironmentVariableOverridesTheWorkerPath) {
  qputenv("TUNEBENCH_WORKER", "/opt/x/tunebench-worker");
  EXPECT_EQ(find_worker_program("/nowhere"), "/opt/x/tunebench-worker");
  qunsetenv("TUNEBENCH_WORKER");
  EXPECT_EQ(find_worker_program("/nowhere"), "/nowhere/tunebench-worker");
}

TEST(WorkerLaunch, LocalPlanIsTheWorkerContract) {
  config::TrialConfig c;
  c.strategy = config::Strategy::Ddp;
  c.world_size = 4;
  launch::LaunchContext ctx;
  ctx.trial_id = "t7";
  ctx.worker = "/w";
  ctx.config_path = "/t/trial.json";
  ctx.events_socket = "/t/events.sock";
  ctx.master_port = 29500;
  const auto plan = launch::plan_launch(c, ctx);
  ASSERT_EQ(plan.processes.size(), 4u);
  EXPECT_EQ(plan.processes[2].argv,
            (std::vector<std::string>{"/w", "--config", "/t/trial.json", "--events", "unix:/t/events.sock", "--trial", "t7"}));
  EXPECT_EQ(plan.processes[2].env.at("RANK"), "2");
}

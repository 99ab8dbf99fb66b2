#include <gtest/gtest.h>

#include "ui/runner/worker_launch.h"

using namespace tunebench;
using namespace tunebench::ui;

TEST(WorkerLaunch, ArgumentsFollowTheWorkerContract) {
  EXPECT_EQ(worker_arguments("/t/trial.json", "unix:/t/events.sock", "t7"),
            QStringList({"--config", "/t/trial.json", "--events", "unix:/t/events.sock", "--trial", "t7"}));
}

TEST(WorkerLaunch, EnvironmentIsTorchrunStyle) {
  config::TrialConfig c;
  c.strategy = config::Strategy::Ddp;
  c.world_size = 4;
  c.nccl_env["NCCL_P2P_DISABLE"] = "1";
  QProcessEnvironment base;
  base.insert("PATH", "/bin");
  const auto env = worker_environment(base, c, 2, 29500, "t1");
  EXPECT_EQ(env.value("RANK"), "2");
  EXPECT_EQ(env.value("WORLD_SIZE"), "4");
  EXPECT_EQ(env.value("LOCAL_RANK"), "2");
  EXPECT_EQ(env.value("LOCAL_WORLD_SIZE"), "4");
  EXPECT_EQ(env.value("MASTER_ADDR"), "127.0.0.1");
  EXPECT_EQ(env.value("MASTER_PORT"), "29500");
  EXPECT_EQ(env.value("NCCL_P2P_DISABLE"), "1");
  EXPECT_EQ(env.value("PATH"), "/bin");
}

TEST(WorkerLaunch, EnvironmentVariableOverridesTheWorkerPath) {
  qputenv("TUNEBENCH_WORKER", "/opt/x/tunebench-worker");
  EXPECT_EQ(find_worker_program("/nowhere"), "/opt/x/tunebench-worker");
  qunsetenv("TUNEBENCH_WORKER");
  EXPECT_EQ(find_worker_program("/nowhere"), "/nowhere/tunebench-worker");
}

TEST(WorkerLaunch, PicksAPort) { EXPECT_GT(pick_free_port(), 0); }

// prepare_launch: the one launch-context and port policy of both runners.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/launch/launch_setup.h"
#include "core/launch/worker_program.h"

using namespace tunebench;
using namespace tunebench::launch;

namespace {

config::TrialConfig local_config(int world) {
  config::TrialConfig c;
  c.device = config::Device::Cpu;
  c.strategy = world > 1 ? config::Strategy::Ddp : config::Strategy::Single;
  c.world_size = world;
  return c;
}

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

TEST(LaunchSetup, TheTrialDirIsPrivateAndGoesWithItsObject) {
  std::string path;
  {
    TrialDir dir;
    path = dir.path();
    struct stat st {};
    ASSERT_EQ(::stat(path.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0700u);
    std::ofstream(dir.file("x")) << "y";
  }
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST(LaunchSetup, AFreeLocalPortCanBeBound) {
  const int port = free_local_port();
  EXPECT_GT(port, 0);
  EXPECT_LT(port, 65536);
}

TEST(LaunchSetup, LocalWritesTheConfigAndPicksAFreePort) {
  TrialDir dir;
  LaunchRequest r;
  r.config = local_config(2);
  r.trial_id = "t1";
  r.worker = "/opt/tb/tunebench-worker";  // named: taken as it is
  r.dir = dir.path();
  r.events_socket = dir.file("events.sock");
  const PreparedLaunch p = prepare_launch(r);
  EXPECT_EQ(p.context.config_path, dir.file("trial.json"));
  EXPECT_EQ(config::from_json(nlohmann::json::parse(read(p.context.config_path))).config.world_size, 2);
  EXPECT_GT(p.context.master_port, 0);
  EXPECT_EQ(p.context.nonce.size(), 16u);
  ASSERT_EQ(p.plan.processes.size(), 2u);
  EXPECT_EQ(p.plan.processes[1].argv.front(), "/opt/tb/tunebench-worker");
  EXPECT_EQ(p.plan.processes[1].env.at("MASTER_PORT"), std::to_string(p.context.master_port));
}

TEST(LaunchSetup, NoWorkerFoundIsOneSentence) {
  TrialDir dir;
  LaunchRequest r;
  r.config = local_config(1);
  r.trial_id = "t2";
  r.program_dir = dir.path();  // nothing beside it
  r.dir = dir.path();
  r.events_socket = dir.file("events.sock");
  ::unsetenv("TUNEBENCH_WORKER");
  try {
    prepare_launch(r);
    FAIL() << "planned without a worker";
  } catch (const LaunchError& e) {
    EXPECT_EQ(std::string(e.what()), worker_not_found_message(dir.path()));
  }
}

TEST(LaunchSetup, RemoteRendezvousPortsComeFromOneRange) {
  TrialDir dir;
  LaunchRequest r;
  r.config = local_config(2);
  r.config.launcher = config::Launcher::Ssh;
  ASSERT_FALSE(config::parse_ssh_hosts("a ranks=1; b ranks=1", r.config.ssh_hosts));
  r.trial_id = "t3";
  r.dir = dir.path();
  r.events_socket = dir.file("events.sock");
  const PreparedLaunch p = prepare_launch(r);
  EXPECT_GE(p.context.master_port, 20000);
  EXPECT_LT(p.context.master_port, 30000);
  EXPECT_EQ(p.plan.processes.size(), 2u);
}

TEST(LaunchSetup, SlurmListensForTheTokenAndSaysWhenItCannot) {
  TrialDir dir;
  LaunchRequest r;
  r.config = local_config(2);
  r.config.launcher = config::Launcher::Slurm;
  r.config.event_host = "login1";
  r.config.slurm_dir = dir.file("slurm");
  r.trial_id = "t4";
  r.dir = dir.path();
  r.events_socket = dir.file("events.sock");
  std::string token;
  r.listen_tcp = [&](const std::string& t, std::string*) {
    token = t;
    return 4711;
  };
  const PreparedLaunch p = prepare_launch(r);
  EXPECT_EQ(token.size(), 64u);
  EXPECT_EQ(p.context.token, token);
  EXPECT_EQ(p.context.tcp_events, "login1:4711");
  r.listen_tcp = [](const std::string&, std::string* error) {
    *error = "address in use";
    return 0;
  };
  EXPECT_THROW(
      {
        try {
          prepare_launch(r);
        } catch (const LaunchError& e) {
          EXPECT_STREQ(e.what(), "cannot listen for the SLURM ranks' events: address in use");
          throw;
        }
      },
      LaunchError);
}

TEST(LaunchSetup, ConfigProblemsAreOneSentence) {
  EXPECT_FALSE(config_problems(local_config(1)));
  auto c = local_config(1);
  c.steps = 3;
  c.warmup = 5;
  EXPECT_EQ(config_problems(c),
            "invalid configuration: warmup: warm-up (5) must leave at least one measured step of 3");
}

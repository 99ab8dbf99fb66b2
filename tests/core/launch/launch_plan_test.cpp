// Launch plans: the local ranks' argv/env, the ssh command line, and the ssh node script run for
// real by /bin/sh with a fake worker (what it exports, the rank-exit reports, the stdin watchdog).
#include "core/launch/launch_plan.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <thread>

#include "core/launch/child_process.h"
#include "core/launch/event_listener.h"
#include "tests/core/launch/process_state.h"

namespace tl = tunebench::launch;
namespace tc = tunebench::config;
namespace fs = std::filesystem;

namespace {

tc::TrialConfig ddp(int world) {
  tc::TrialConfig c;
  c.strategy = tc::Strategy::Ddp;
  c.world_size = world;
  c.nccl_env = {{"NCCL_P2P_DISABLE", "1"}};
  return c;
}

tc::TrialConfig ssh_config(const std::string& hosts) {
  tc::TrialConfig c = ddp(4);
  c.launcher = tc::Launcher::Ssh;
  EXPECT_FALSE(tc::parse_ssh_hosts(hosts, c.ssh_hosts).has_value());
  return c;
}

tl::LaunchContext context() {
  tl::LaunchContext ctx;
  ctx.trial_id = "trial-7";
  ctx.worker = "/opt/tb/bin/tunebench-worker";
  ctx.config_path = "/tmp/run/trial.json";
  ctx.events_socket = "/tmp/run/events.sock";
  ctx.master_port = 29511;
  ctx.nonce = "abc123";
  ctx.home = "/home/alice";
  return ctx;
}

bool contains(const std::vector<std::string>& v, const std::string& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

}  // namespace

TEST(ShellQuote, QuotesWhatTheShellWouldSplitOrExpand) {
  EXPECT_EQ(tl::shell_quote("plain/path-1.x"), "plain/path-1.x");
  EXPECT_EQ(tl::shell_quote(""), "''");
  EXPECT_EQ(tl::shell_quote("a b"), "'a b'");
  EXPECT_EQ(tl::shell_quote("it's $HOME"), "'it'\\''s $HOME'");
  EXPECT_EQ(tl::shell_join({"echo", "a;b", "c"}), "echo 'a;b' c");
}

TEST(WorkerCommandLine, FlagsForTheKnobsThatDifferShellQuoted) {
  tc::TrialConfig c = ddp(2);
  c.name = "not a flag";
  c.micro_batch = 8;
  c.data_path = "/data/my tokens.bin";
  const std::string line = tl::worker_command_line(c);
  EXPECT_EQ(line.rfind("torchrun --standalone --nproc-per-node 2 --no-python tunebench-worker ", 0), 0u) << line;
  EXPECT_NE(line.find(" --micro-batch 8"), std::string::npos) << line;
  EXPECT_NE(line.find(" --strategy ddp"), std::string::npos) << line;
  EXPECT_NE(line.find(" --nccl-env NCCL_P2P_DISABLE=1"), std::string::npos) << line;
  EXPECT_NE(line.find(" --data-path '/data/my tokens.bin'"), std::string::npos) << line;
  EXPECT_EQ(line.find("--name"), std::string::npos) << line;
  EXPECT_EQ(line.find("--seq-len"), std::string::npos) << line;  // at its default
  EXPECT_EQ(tl::worker_command_line(tc::TrialConfig{}), "tunebench-worker");
}

TEST(LaunchPlan, LocalRanksGetTorchrunVariables) {
  const auto plan = tl::plan_launch(ddp(2), context());
  ASSERT_EQ(plan.processes.size(), 2u);
  const auto& p = plan.processes[1];
  EXPECT_EQ(p.kind, tl::LaunchProcess::Kind::Rank);
  EXPECT_EQ(p.argv, (std::vector<std::string>{"/opt/tb/bin/tunebench-worker", "--config", "/tmp/run/trial.json",
                                              "--events", "unix:/tmp/run/events.sock", "--trial", "trial-7"}));
  EXPECT_EQ(p.ranks, std::vector<int>{1});
  EXPECT_EQ(p.env.at("RANK"), "1");
  EXPECT_EQ(p.env.at("LOCAL_RANK"), "1");
  EXPECT_EQ(p.env.at("WORLD_SIZE"), "2");
  EXPECT_EQ(p.env.at("LOCAL_WORLD_SIZE"), "2");
  EXPECT_EQ(p.env.at("NODE_RANK"), "0");
  EXPECT_EQ(p.env.at("MASTER_ADDR"), "127.0.0.1");
  EXPECT_EQ(p.env.at("MASTER_PORT"), "29511");
  EXPECT_EQ(p.env.at("TUNEBENCH_TRIAL"), "trial-7");
  EXPECT_EQ(p.env.at("NCCL_P2P_DISABLE"), "1");
  EXPECT_FALSE(p.stop_by_closing_stdin);
  EXPECT_TRUE(plan.files.empty());
  EXPECT_FALSE(plan.tcp_events);
}

TEST(LaunchPlan, SshIsOneBatchModeConnectionPerHostForwardingTheEventSocket) {
  auto c = ssh_config("alice@gpu1:2222 ranks=2; gpu2 ranks=2 worker=/opt/w CUDA_VISIBLE_DEVICES=0,1");
  c.ssh_command = "ssh -F /etc/lab_config";
  const auto plan = tl::plan_launch(c, context());
  ASSERT_EQ(plan.processes.size(), 2u);
  const auto& a = plan.processes[0].argv;
  ASSERT_GE(a.size(), 6u);
  EXPECT_EQ(std::vector<std::string>(a.begin(), a.begin() + 3), (std::vector<std::string>{"ssh", "-F", "/etc/lab_config"}));
  EXPECT_TRUE(contains(a, "BatchMode=yes"));
  EXPECT_TRUE(contains(a, "ExitOnForwardFailure=yes"));
  EXPECT_TRUE(contains(a, "-T"));
  auto at = [&](const std::string& flag) { return *(std::find(a.begin(), a.end(), flag) + 1); };
  EXPECT_EQ(at("-p"), "2222");
  EXPECT_EQ(at("-l"), "alice");
  EXPECT_EQ(at("-R"), "/tmp/tunebench-abc123-0.sock:/tmp/run/events.sock");
  EXPECT_EQ(a[a.size() - 2], "gpu1");
  EXPECT_EQ(a.back().rfind("sh -c '", 0), 0u);
  EXPECT_EQ(plan.processes[0].ranks, (std::vector<int>{0, 1}));
  EXPECT_EQ(plan.processes[1].ranks, (std::vector<int>{2, 3}));
  EXPECT_EQ(plan.processes[1].node, 1);
  EXPECT_EQ(plan.processes[1].label(), "node 1 (gpu2)");
  EXPECT_FALSE(contains(plan.processes[1].argv, "-p"));
  EXPECT_FALSE(contains(plan.processes[1].argv, "-l"));
  EXPECT_TRUE(plan.processes[1].stop_by_closing_stdin);
  EXPECT_NE(plan.preview().find("# node 1 (gpu2) on gpu2"), std::string::npos);
}

TEST(LaunchPlan, SshNeedsTheEventSocket) {
  auto ctx = context();
  ctx.events_socket.clear();
  EXPECT_THROW(tl::plan_launch(ssh_config("a ranks=4"), ctx), std::invalid_argument);
}

TEST(RankExit, ParsesTheNodeScriptsReports) {
  EXPECT_EQ(tl::parse_rank_exit("@tunebench rank-exit 3 137"), std::make_pair(3, 137));
  EXPECT_EQ(tl::parse_rank_exit("NCCL INFO x@tunebench rank-exit 0 0"), std::make_pair(0, 0));
  EXPECT_FALSE(tl::parse_rank_exit("@tunebench rank-exit 3"));
  EXPECT_FALSE(tl::parse_rank_exit("@tunebench rank-exit -1 0"));
  EXPECT_FALSE(tl::parse_rank_exit("@tunebench rank-exit 1 2 3"));
  EXPECT_FALSE(tl::parse_rank_exit("rank 1 exit 0"));
}

// ---- the node script, run by /bin/sh ---------------------------------------------------------

namespace {

// Alive and not a zombie (an orphan's zombie lingers where PID 1 does not reap, e.g. containers).
using tunebench::launch::test::running;

struct NodeRun {
  std::vector<std::string> stdout_lines;
  int exit_status = -1;
};

// Runs node `node`'s script with a fake worker until it ends (a hang guard of 60 s); once
// `close_stdin_when` holds (checked as the output is read), its stdin is closed, as sshd does.
NodeRun run_node_script(const tc::TrialConfig& c, tl::LaunchContext ctx, int node,
                        const std::function<bool()>& close_stdin_when = {}) {
  NodeRun out;
  std::string error;
  tl::EventListener socket({nullptr, nullptr, nullptr});
  EXPECT_TRUE(socket.listen_unix(tl::remote_socket_path(ctx, node), &error)) << error;  // as sshd would bind it
  auto child = tl::ChildProcess::start({"sh", "-c", tl::ssh_node_script(c, ctx, node)}, {}, &error);
  EXPECT_TRUE(child) << error;
  if (!child) return out;
  std::string buf;
  const auto start = std::chrono::steady_clock::now();
  while (child->stdout_fd() >= 0) {
    pollfd p{child->stdout_fd(), POLLIN, 0};
    ::poll(&p, 1, 50);
    const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (close_stdin_when && close_stdin_when()) child->close_stdin();
    if (t > 60) break;
    if (!(p.revents & (POLLIN | POLLHUP))) continue;
    char chunk[4096];
    const ssize_t n = ::read(child->stdout_fd(), chunk, sizeof(chunk));
    if (n <= 0) {
      child->close_stdout();
      break;
    }
    buf.append(chunk, size_t(n));
  }
  for (int i = 0; i < 1200 && !child->poll_exit(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  out.exit_status = child->exited() ? child->shell_status() : -1;
  size_t s = 0;
  for (size_t nl = buf.find('\n'); nl != std::string::npos; nl = buf.find('\n', s)) {
    out.stdout_lines.push_back(buf.substr(s, nl - s));
    s = nl + 1;
  }
  return out;
}

}  // namespace

TEST(SshNodeScript, StartsTheNodesRanksWithTheirVariablesAndReportsEachExit) {
  const fs::path dir = fs::temp_directory_path() / ("tb-node-test-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  // The fake worker records its environment and config, and exits with 10 + its local rank.
  const fs::path worker = dir / "fake worker";
  std::ofstream(worker) << "#!/bin/sh\n"
                           "env | grep -E '^(RANK|LOCAL_RANK|WORLD_SIZE|LOCAL_WORLD_SIZE|NODE_RANK|MASTER_ADDR|"
                           "MASTER_PORT|TUNEBENCH_TRIAL|NCCL_P2P_DISABLE|CUDA_VISIBLE_DEVICES|EXTRA)=' | sort > \""
                        << dir.string() << "/env$RANK\"\n"
                        << "echo \"$@\" > \"" << dir.string() << "/args$RANK\"\n"
                        << "cp \"$2\" \"" << dir.string() << "/config$RANK.json\"\n"
                        << "exit $((10 + LOCAL_RANK))\n";
  fs::permissions(worker, fs::perms::owner_all);
  auto c = ssh_config("gpu1 ranks=2; gpu2 ranks=2 CUDA_VISIBLE_DEVICES=0,1");
  c.ssh_hosts[1].worker = worker.string();  // a space in it: the JSON form holds any path
  c.remote_env = {{"EXTRA", "it's here"}};
  c.master_addr = "10.0.0.1";
  c.name = "a name with 'quotes' and $dollars";
  auto ctx = context();
  ctx.nonce = "t" + std::to_string(::getpid());
  const auto run = run_node_script(c, ctx, 1);
  EXPECT_EQ(run.exit_status, 0);
  std::vector<std::string> reports;
  for (const auto& l : run.stdout_lines)
    if (tl::parse_rank_exit(l)) reports.push_back(l);
  std::sort(reports.begin(), reports.end());
  EXPECT_EQ(reports, (std::vector<std::string>{"@tunebench rank-exit 2 10", "@tunebench rank-exit 3 11"}));
  std::ifstream env3(dir / "env3");
  std::string all((std::istreambuf_iterator<char>(env3)), {});
  EXPECT_EQ(all,
            "CUDA_VISIBLE_DEVICES=0,1\nEXTRA=it's here\nLOCAL_RANK=1\nLOCAL_WORLD_SIZE=2\nMASTER_ADDR=10.0.0.1\n"
            "MASTER_PORT=29511\nNCCL_P2P_DISABLE=1\nNODE_RANK=1\nRANK=3\nTUNEBENCH_TRIAL=trial-7\nWORLD_SIZE=4\n");
  std::string args;
  std::getline(std::ifstream(dir / "args2"), args);
  EXPECT_NE(args.find("--events unix:/tmp/tunebench-" + ctx.nonce + "-1.sock --trial trial-7"), std::string::npos)
      << args;
  nlohmann::json stored;
  std::ifstream(dir / "config2.json") >> stored;
  const auto parsed = tc::from_json(stored);
  EXPECT_TRUE(parsed.ok());
  EXPECT_EQ(parsed.config, c);  // the config arrived intact, quotes and all
  fs::remove_all(dir);
}

TEST(SshNodeScript, ClosingStdinEndsTheNodesRanks) {
  // What Stop and a lost connection do: sshd closes the command's stdin. It is closed once both
  // ranks run (a loaded machine may take seconds to start them), and the ranks must then end.
  const fs::path dir = fs::temp_directory_path() / ("tb-node-stop-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path worker = dir / "sleeper";
  std::ofstream(worker) << "#!/bin/sh\necho $$ > \"" << dir.string() << "/pid$RANK.tmp\"\n"
                        << "mv \"" << dir.string() << "/pid$RANK.tmp\" \"" << dir.string() << "/pid$RANK\"\n"
                        << "exec sleep 600\n";
  fs::permissions(worker, fs::perms::owner_all);
  auto c = ssh_config("gpu1 ranks=2; gpu2 ranks=2");
  c.remote_worker = worker.string();
  auto ctx = context();
  ctx.nonce = "s" + std::to_string(::getpid());
  auto pid_of = [&](int rank) {
    pid_t pid = 0;
    std::ifstream(dir / ("pid" + std::to_string(rank))) >> pid;
    return pid;
  };
  const auto run = run_node_script(c, ctx, 0, [&] { return pid_of(0) > 0 && pid_of(1) > 0; });
  // The script ended by itself (a node whose ranks ignored the closed stdin would run 600 s and
  // hit the 60 s guard: exit status -1).
  EXPECT_NE(run.exit_status, -1) << "the node's script did not end after its stdin closed";
  for (int r : {0, 1}) {
    const pid_t pid = pid_of(r);
    ASSERT_GT(pid, 0) << "rank " << r << " never started";
    // Signalled by now; a loaded machine may take a moment to let it die.
    for (int i = 0; i < 400 && running(pid); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_FALSE(running(pid)) << "rank " << r << " outlived the closed connection";
  }
  fs::remove_all(dir);
}

// A script trial (docs/SCRIPTS.md): every rank runs the interpreter with tunebench_probe, the same
// common arguments, then -- the script and its arguments (template filled in); the probe's folder
// first on PYTHONPATH. Remote ranks find the probe beside the remote worker's install.
TEST(LaunchPlan, AScriptRunsUnderTheProbeOnEveryLauncher) {
  tc::TrialConfig c;
  c.script = "/home/alice/train.py";
  c.script_args = "--batch-size {micro_batch} --tag 'a b'";
  c.micro_batch = 16;
  c.world_size = 2;
  auto ctx = context();
  ctx.python = "/usr/bin/python3";
  ctx.probe_path = "/opt/tb/share/tunebench/python";
  ctx.pythonpath = "/home/alice/lib";
  const auto plan = tl::plan_launch(c, ctx);
  ASSERT_EQ(plan.processes.size(), 2u);
  const auto& p = plan.processes[1];
  EXPECT_EQ(p.argv, (std::vector<std::string>{"/usr/bin/python3", "-m", "tunebench_probe", "--config",
                                              "/tmp/run/trial.json", "--events", "unix:/tmp/run/events.sock", "--trial",
                                              "trial-7", "--", "/home/alice/train.py", "--batch-size", "16", "--tag",
                                              "a b"}));
  EXPECT_EQ(p.env.at("PYTHONPATH"), "/opt/tb/share/tunebench/python:/home/alice/lib");
  EXPECT_EQ(p.env.at("RANK"), "1");
  EXPECT_EQ(p.env.at("WORLD_SIZE"), "2");

  // Without the interpreter or the probe the plan says so instead of starting the worker.
  auto bare = context();
  EXPECT_THROW(tl::plan_launch(c, bare), std::invalid_argument);
  // A link probe is the worker's, whatever the trial.
  bare.link_probe = tl::LinkProbeRange{};
  EXPECT_EQ(tl::plan_launch(c, bare).processes[0].argv.front(), "/opt/tb/bin/tunebench-worker");

  tc::TrialConfig remote = c;
  remote.launcher = tc::Launcher::Ssh;
  remote.python = "/opt/venv/bin/python";
  ASSERT_FALSE(tc::parse_ssh_hosts("gpu1 ranks=2", remote.ssh_hosts).has_value());
  const std::string node = tl::ssh_node_script(remote, ctx, 0);
  EXPECT_NE(node.find("/opt/venv/bin/python -m tunebench_probe --config"), std::string::npos) << node;
  EXPECT_NE(node.find("/share/tunebench/python${PYTHONPATH:+:$PYTHONPATH}\"; export PYTHONPATH;"), std::string::npos)
      << node;
  EXPECT_NE(node.find("-- /home/alice/train.py --batch-size 16 --tag 'a b'"), std::string::npos) << node;

  // How to reproduce it: the command line's --script, with what is applied and the run length.
  tc::TrialConfig applied = c;
  ASSERT_FALSE(tc::set_knob(applied, "num_workers", "4"));
  const std::string line = tl::worker_command_line(applied);
  EXPECT_EQ(line.rfind("tunebench-cli run SESSION.tbsession --script /home/alice/train.py --nproc 2", 0), 0u) << line;
  EXPECT_NE(line.find("--set num_workers=4"), std::string::npos) << line;
  EXPECT_NE(line.find("--set micro_batch=16"), std::string::npos) << line;
  EXPECT_NE(line.find(" -- --batch-size {micro_batch} --tag 'a b'"), std::string::npos) << line;
}

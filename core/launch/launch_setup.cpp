#include "core/launch/launch_setup.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>

#include "core/launch/random_token.h"
#include "core/config/script.h"
#include "core/launch/worker_program.h"

namespace tunebench::launch {

namespace fs = std::filesystem;

TrialDir::TrialDir() {
  std::error_code ec;
  fs::path base = fs::temp_directory_path(ec);
  if (ec || base.empty()) base = "/tmp";
  std::string tmpl = (base / "tunebench-run-XXXXXX").string();
  if (!::mkdtemp(tmpl.data())) throw LaunchError("cannot create a temporary folder in " + base.string());
  m_path = tmpl;
}

TrialDir::~TrialDir() {
  std::error_code ec;
  fs::remove_all(m_path, ec);
}

int free_local_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return 0;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  const bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
                  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0;
  ::close(fd);
  return ok ? ntohs(addr.sin_port) : 0;
}

std::string host_name() {
  char buf[256] = {};
  ::gethostname(buf, sizeof(buf) - 1);
  return buf;
}

std::optional<std::string> config_problems(const config::TrialConfig& config) {
  const auto problems = config::validate(config);
  if (problems.empty()) return std::nullopt;
  std::string text = "invalid configuration: " + config::describe(problems);
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

namespace {
void write_file(const std::string& path, const std::string& text) {
  std::error_code ec;
  fs::create_directories(fs::path(path).parent_path(), ec);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) throw LaunchError("cannot write " + path);
}
}  // namespace

PreparedLaunch prepare_launch(const LaunchRequest& r) {
  const config::TrialConfig& config = r.config;
  PreparedLaunch out;
  LaunchContext& ctx = out.context;
  ctx.trial_id = r.trial_id;
  ctx.config_path = r.dir + "/trial.json";
  write_file(ctx.config_path, config::to_json(config).dump(2) + "\n");
  ctx.events_socket = r.events_socket;
  if (const char* home = std::getenv("HOME")) ctx.home = home;
  ctx.link_probe = r.link_probe;
  try {
    ctx.nonce = random_hex(8);
  } catch (const std::exception& e) {
    throw LaunchError(e.what());
  }
  if (config.launcher == config::Launcher::Local) {
    ctx.worker = find_worker(r.worker, r.program_dir);
    if (config::is_script(config) && !r.link_probe) {
      const PythonFound python = find_python(config.python);
      if (python.path.empty()) throw LaunchError(python.error);
      ctx.python = python.path;
      ctx.probe_path = find_probe(r.program_dir);
      if (ctx.probe_path.empty()) throw LaunchError(probe_not_found_message(r.program_dir));
      if (const char* pp = std::getenv("PYTHONPATH")) ctx.pythonpath = pp;
    } else if (ctx.worker.empty()) {
      throw LaunchError(worker_not_found_message(r.program_dir));
    }
    ctx.master_port = free_local_port();
    if (ctx.master_port == 0) throw LaunchError("no free TCP port on 127.0.0.1 for the rendezvous");
  } else {
    ctx.master_port = 20000 + int(std::random_device{}() % 10000);
  }
  if (config.launcher == config::Launcher::Slurm) {
    ctx.token = random_hex(32);
    std::string error;
    const int port = r.listen_tcp ? r.listen_tcp(ctx.token, &error) : 0;
    if (port == 0)
      throw LaunchError("cannot listen for the SLURM ranks' events: " +
                        (error.empty() ? std::string("no listener") : error));
    ctx.tcp_events = (config.event_host.empty() ? host_name() : config.event_host) + ":" + std::to_string(port);
  }
  try {
    out.plan = plan_launch(config, ctx);
  } catch (const std::exception& e) {
    throw LaunchError(std::string("cannot plan the launch: ") + e.what());
  }
  for (const auto& [path, text] : out.plan.files) write_file(path, text);
  return out;
}

}  // namespace tunebench::launch

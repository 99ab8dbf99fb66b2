#include "tests/core/store/test_support.h"

#include <sqlite3.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace tunebench::store::test {

namespace tp = protocol;
namespace fs = std::filesystem;

TempDir::TempDir() {
  std::string templ = (fs::temp_directory_path() / "tunebench-store-XXXXXX").string();
  if (!mkdtemp(templ.data())) throw std::runtime_error("mkdtemp failed");
  m_path = templ;
}
TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(m_path, ec);
}

namespace {
tp::Event wrap(int rank, int64_t t_us, tp::Payload p, const std::string& trial = "run-1") {
  tp::Event e;
  e.header.trial = trial;
  e.header.rank = rank;
  e.header.t_us = t_us;
  e.payload = std::move(p);
  return e;
}
constexpr int64_t kT0 = 1'764'000'000'000'000;  // some microseconds since the epoch
}  // namespace

tp::Event hello_event(int rank, int world_size) {
  tp::Hello h;
  h.host = "gpu-node-" + std::to_string(rank / 8);
  h.pid = 4000 + rank;
  h.world_size = world_size;
  h.local_rank = rank % 8;
  h.device = "NVIDIA H200";
  h.device_kind = "cuda";
  h.device_memory_bytes = 150'000'000'000;
  h.driver = "580.95.05";
  h.cuda = "13.0";
  h.cudnn = "9.10.2";
  h.nccl = "2.28.3";
  h.torch = "2.11.0";
  h.backend = "nccl";
  h.env = {{"NCCL_DEBUG", "INFO"}, {"NCCL_ALGO", "Ring"}};
  h.config = {{"strategy", "ddp"}, {"world_size", world_size}, {"model", "7b"}, {"bucket_mb", 25.0}};
  h.clock_offset_us = rank * 17;
  return wrap(rank, kT0 + rank, h);
}

tp::Event model_event(int rank) {
  tp::ModelInfo m;
  m.parameters = 6'738'415'616;
  m.matmul_parameters = 6'607'343'616;
  m.flops_per_token = 4.2e10;
  m.flops_formula = "6*N_matmul + 12*L*H*Q*T";
  m.predicted_peak_bytes = 90'000'000'000;
  m.parameter_bytes = 13'476'831'232;
  return wrap(rank, kT0 + 10, m);
}

tp::Event step_event(int rank, int64_t step, const std::string& trial) {
  tp::Step s;
  s.step = step;
  s.warmup = step < 3;
  s.start_us = kT0 + 1000 + step * 100'000;
  s.end_us = s.start_us + 95'000 + rank;
  s.step_ms = (s.end_us - s.start_us) / 1000.0;
  s.tokens = 4096;
  s.loss = 10.0 / (1.0 + step) + 0.125;
  s.memory = {1'000'000 + step, 2'000'000, 3'000'000, step % 2};
  s.comm_ms = 12.5;
  s.exposed_comm_ms = 3.25;
  s.busbw_gbps = 180.5 + step;
  s.skipped = step == 4;
  const int64_t t = s.start_us;
  s.intervals = {
      {tp::Lane::Host, tp::Phase::DataWait, t, t + 500, "", 0, 0.0},
      {tp::Lane::Compute, tp::Phase::Forward, t + 600, t + 30'000, "", 0, 0.0},
      {tp::Lane::Compute, tp::Phase::Backward, t + 30'000, t + 80'000, "", 0, 0.0},
      {tp::Lane::Comm, tp::Phase::AllReduce, t + 50'000, t + 60'000, "bucket 1", 26'214'400, 190.25},
      {tp::Lane::Comm, tp::Phase::AllReduce, t + 78'000, t + 83'000, "bucket 0", 1'048'576, 120.0},
      {tp::Lane::Compute, tp::Phase::Optimizer, t + 84'000, t + 95'000, "", 0, 0.0},
  };
  return wrap(rank, s.end_us, s, trial);
}

tp::Event gpu_event(int rank, int64_t t_us, bool with_optionals) {
  tp::GpuSample g;
  g.index = rank;
  if (with_optionals) {
    g.util_pct = 97.5;
    g.mem_used_bytes = 80'000'000'000;
    g.mem_total_bytes = 150'000'000'000;
    g.power_w = 650.25;
    g.sm_clock_mhz = 1980;
    g.temperature_c = 61;
    g.pcie_tx_mbps = 12.5;
    g.pcie_rx_mbps = 13.5;
    g.nvlink_tx_mbps = 120000;
    g.nvlink_rx_mbps = 119000;
  } else {
    g.cpu_pct = 180.0;
    g.rss_bytes = 4'000'000'000;
  }
  return wrap(rank, t_us, g);
}

tp::Event log_event(int rank, const std::string& message) {
  return wrap(rank, kT0 + 20, tp::Log{"info", message});
}
tp::Event warning_event(int rank) {
  return wrap(rank, kT0 + 30, tp::Warning{"data", "num_workers=0: the data loader runs on the training thread"});
}
tp::Event error_event(int rank) {
  return wrap(rank, kT0 + 40, tp::Error{"oom", "CUDA out of memory", {{"requested_bytes", 2147483648LL}}});
}
tp::Event done_event(int rank) {
  tp::Done d;
  d.exit_code = 0;
  d.summary = {7, 95.5, 95.1, 96.2, 43000.5, 0.41, 3'000'000, 12.5, 3.25, 0.5, 1.875};
  return wrap(rank, kT0 + 5'000'000, d);
}

std::vector<tp::Event> full_trial(int ranks, int steps) {
  std::vector<tp::Event> out;
  for (int r = 0; r < ranks; ++r) out.push_back(hello_event(r, ranks));
  for (int r = 0; r < ranks; ++r) out.push_back(model_event(r));
  for (int r = 0; r < ranks; ++r) out.push_back(log_event(r, "rank " + std::to_string(r) + " ready"));
  out.push_back(warning_event(0));
  for (int s = 0; s < steps; ++s) {
    for (int r = 0; r < ranks; ++r) out.push_back(step_event(r, s));
    for (int r = 0; r < ranks; ++r) out.push_back(gpu_event(r, kT0 + 1000 + s * 100'000, s % 2 == 0));
  }
  out.push_back(error_event(ranks - 1));
  for (int r = 0; r < ranks; ++r) out.push_back(done_event(r));
  return out;
}

nlohmann::json canonical(const tp::TrialLog& log) {
  nlohmann::json j = {{"trial", log.trial}};
  auto enc = [](int64_t t, tp::Payload p) {
    tp::Event e;
    e.header.t_us = t;
    e.payload = std::move(p);
    return tp::to_json(e);
  };
  for (const auto& [rank, r] : log.ranks) {
    nlohmann::json jr = nlohmann::json::array();
    if (r.hello) jr.push_back(enc(0, *r.hello));
    if (r.model) {
      // The model event's `attention` is the event log's record only (event_fields.h): a session
      // keeps the same sentence as the trial's "attention kernel: ..." log line, compared below.
      auto jm = enc(0, *r.model);
      jm.erase("attention");
      jr.push_back(jm);
    }
    for (const auto& s : r.steps) {
      auto js = enc(0, s);
      // to_json leaves zero bytes/bandwidth out; compare them explicitly too.
      for (const auto& in : s.intervals) js["raw"].push_back({in.bytes, in.busbw_gbps, in.label});
      jr.push_back(js);
    }
    for (const auto& g : r.samples) jr.push_back(enc(g.t_us, g.value));
    for (const auto& l : r.logs) jr.push_back(enc(l.t_us, l.value));
    for (const auto& w : r.warnings) jr.push_back(enc(w.t_us, w.value));
    for (const auto& e : r.errors) jr.push_back(enc(e.t_us, e.value));
    if (r.done) jr.push_back(enc(0, *r.done));
    for (const auto& p : r.probes) jr.push_back(enc(0, p));
    j["ranks"][std::to_string(rank)] = jr;
  }
  for (const auto& p : log.problems)
    j["problems"].push_back({tp::to_string(p.kind), p.line_number, p.message, p.excerpt});
  return j;
}

tp::TrialLog log_of(const std::vector<tp::Event>& events) {
  tp::TrialLog log;
  for (const auto& e : events) log.add(e);
  return log;
}

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

void copy_file(const std::string& from, const std::string& to) {
  fs::copy_file(from, to, fs::copy_options::overwrite_existing);
}

void raw_exec(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  if (sqlite3_open(path.c_str(), &db) != SQLITE_OK) throw std::runtime_error("raw open failed");
  char* err = nullptr;
  const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err);
  const std::string msg = err ? err : "";
  sqlite3_free(err);
  sqlite3_close(db);
  if (rc != SQLITE_OK) throw std::runtime_error("raw_exec: " + msg + " in: " + sql);
}

}  // namespace tunebench::store::test

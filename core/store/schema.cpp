// Schema DDL per version and the migration runner.
//
// Columns hold one protocol field each, with the protocol's units in their names, so a session
// is also readable with the sqlite3 shell. Lanes, phases and statuses are stored as their wire
// names (text) rather than numbers: readable, and stable if the enums are reordered.
#include "core/store/schema.h"

#include <SQLiteCpp/SQLiteCpp.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <string>

namespace tunebench::store {
namespace {

// ---- version 1 ---------------------------------------------------------------------------------
const char* const kVersion1[] = {
    R"(CREATE TABLE session (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  name TEXT NOT NULL,
  created_us INTEGER NOT NULL,
  notes TEXT NOT NULL DEFAULT ''
))",
    R"(CREATE TABLE trials (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  run_id TEXT NOT NULL DEFAULT '',
  config TEXT NOT NULL,
  status TEXT NOT NULL,
  created_us INTEGER NOT NULL,
  start_us INTEGER,
  end_us INTEGER,
  exit_reason TEXT NOT NULL DEFAULT '',
  owner TEXT NOT NULL DEFAULT '',
  source TEXT NOT NULL DEFAULT '',
  notes TEXT NOT NULL DEFAULT ''
))",
    // One row per rank, from its hello event.
    R"(CREATE TABLE rank_env (
  trial_id INTEGER NOT NULL REFERENCES trials(id) ON DELETE CASCADE,
  rank INTEGER NOT NULL,
  t_us INTEGER NOT NULL,
  host TEXT NOT NULL,
  pid INTEGER NOT NULL,
  world_size INTEGER NOT NULL,
  local_rank INTEGER NOT NULL,
  device TEXT NOT NULL,
  device_kind TEXT NOT NULL,
  device_memory_bytes INTEGER NOT NULL,
  driver TEXT NOT NULL,
  cuda TEXT NOT NULL,
  cudnn TEXT NOT NULL,
  nccl TEXT NOT NULL,
  torch TEXT NOT NULL,
  backend TEXT NOT NULL,
  nccl_env TEXT NOT NULL,
  config TEXT NOT NULL,
  clock_offset_us INTEGER NOT NULL,
  PRIMARY KEY (trial_id, rank)
) WITHOUT ROWID)",
    R"(CREATE TABLE model_info (
  trial_id INTEGER NOT NULL REFERENCES trials(id) ON DELETE CASCADE,
  rank INTEGER NOT NULL,
  t_us INTEGER NOT NULL,
  parameters INTEGER NOT NULL,
  matmul_parameters INTEGER NOT NULL,
  flops_per_token REAL NOT NULL,
  flops_formula TEXT NOT NULL,
  predicted_peak_bytes INTEGER NOT NULL,
  parameter_bytes INTEGER NOT NULL,
  PRIMARY KEY (trial_id, rank)
) WITHOUT ROWID)",
    // Row id order is arrival order, which TrialLog keeps per rank.
    R"(CREATE TABLE steps (
  id INTEGER PRIMARY KEY,
  trial_id INTEGER NOT NULL REFERENCES trials(id) ON DELETE CASCADE,
  rank INTEGER NOT NULL,
  step INTEGER NOT NULL,
  warmup INTEGER NOT NULL,
  start_us INTEGER NOT NULL,
  end_us INTEGER NOT NULL,
  step_ms REAL NOT NULL,
  tokens INTEGER NOT NULL,
  loss REAL NOT NULL,
  allocated_bytes INTEGER NOT NULL,
  reserved_bytes INTEGER NOT NULL,
  peak_bytes INTEGER NOT NULL,
  alloc_retries INTEGER NOT NULL,
  comm_ms REAL NOT NULL,
  exposed_comm_ms REAL NOT NULL,
  busbw_gbps REAL NOT NULL,
  skipped INTEGER NOT NULL
))",
    "CREATE INDEX steps_by_trial ON steps (trial_id, rank, id)",
    R"(CREATE TABLE intervals (
  step_id INTEGER NOT NULL REFERENCES steps(id) ON DELETE CASCADE,
  idx INTEGER NOT NULL,
  lane TEXT NOT NULL,
  phase TEXT NOT NULL,
  start_us INTEGER NOT NULL,
  end_us INTEGER NOT NULL,
  label TEXT NOT NULL,
  bytes INTEGER NOT NULL,
  busbw_gbps REAL NOT NULL,
  PRIMARY KEY (step_id, idx)
) WITHOUT ROWID)",
    R"(CREATE TABLE gpu_samples (
  id INTEGER PRIMARY KEY,
  trial_id INTEGER NOT NULL REFERENCES trials(id) ON DELETE CASCADE,
  rank INTEGER NOT NULL,
  t_us INTEGER NOT NULL,
  gpu_index INTEGER NOT NULL,
  util_pct REAL,
  mem_used_bytes INTEGER,
  mem_total_bytes INTEGER,
  power_w REAL,
  sm_clock_mhz REAL,
  temperature_c REAL,
  pcie_tx_mbps REAL,
  pcie_rx_mbps REAL,
  nvlink_tx_mbps REAL,
  nvlink_rx_mbps REAL,
  cpu_pct REAL,
  rss_bytes INTEGER
))",
    "CREATE INDEX gpu_samples_by_trial ON gpu_samples (trial_id, rank, id)",
    // Logs, warnings and errors in one table: kind says which, tag is the level or error kind.
    R"(CREATE TABLE messages (
  id INTEGER PRIMARY KEY,
  trial_id INTEGER NOT NULL REFERENCES trials(id) ON DELETE CASCADE,
  rank INTEGER NOT NULL,
  t_us INTEGER NOT NULL,
  kind TEXT NOT NULL,
  tag TEXT NOT NULL,
  message TEXT NOT NULL,
  details TEXT
))",
    "CREATE INDEX messages_by_trial ON messages (trial_id, rank, id)",
    // The done event of each rank.
    R"(CREATE TABLE summaries (
  trial_id INTEGER NOT NULL REFERENCES trials(id) ON DELETE CASCADE,
  rank INTEGER NOT NULL,
  exit_code INTEGER NOT NULL,
  measured_steps INTEGER NOT NULL,
  step_ms_median REAL NOT NULL,
  step_ms_p25 REAL NOT NULL,
  step_ms_p75 REAL NOT NULL,
  tokens_per_s REAL NOT NULL,
  mfu REAL NOT NULL,
  peak_bytes INTEGER NOT NULL,
  comm_ms_median REAL NOT NULL,
  exposed_comm_ms_median REAL NOT NULL,
  data_wait_ms_median REAL NOT NULL,
  final_loss REAL NOT NULL,
  PRIMARY KEY (trial_id, rank)
) WITHOUT ROWID)",
    // Lines of the event stream that were not events (protocol::ReadProblem).
    R"(CREATE TABLE read_problems (
  id INTEGER PRIMARY KEY,
  trial_id INTEGER NOT NULL REFERENCES trials(id) ON DELETE CASCADE,
  kind TEXT NOT NULL,
  line_number INTEGER NOT NULL,
  message TEXT NOT NULL,
  excerpt TEXT NOT NULL
))",
    "CREATE INDEX read_problems_by_trial ON read_problems (trial_id, id)",
};

// ---- version 2: tags, and the trials table filtered by status (the runner's queue) ----------------
const char* const kVersion2[] = {
    R"(CREATE TABLE trial_tags (
  trial_id INTEGER NOT NULL REFERENCES trials(id) ON DELETE CASCADE,
  tag TEXT NOT NULL,
  PRIMARY KEY (trial_id, tag)
) WITHOUT ROWID)",
    "CREATE INDEX trials_by_status ON trials (status)",
};

// ---- version 3: the GPU interconnect of each rank (hello.topology, from NVML) ----------------------
const char* const kVersion3[] = {
    R"(CREATE TABLE rank_topology (
  trial_id INTEGER NOT NULL REFERENCES trials(id) ON DELETE CASCADE,
  rank INTEGER NOT NULL,
  topology TEXT NOT NULL,
  PRIMARY KEY (trial_id, rank)
) WITHOUT ROWID)",
};

// ---- version 4: link probe points (tunebench-worker --probe-link, protocol `probe` events) -------
const char* const kVersion4[] = {
    R"(CREATE TABLE link_probes (
  trial_id INTEGER NOT NULL REFERENCES trials(id) ON DELETE CASCADE,
  rank INTEGER NOT NULL,
  idx INTEGER NOT NULL,
  collective TEXT NOT NULL,
  dtype TEXT NOT NULL,
  bytes INTEGER NOT NULL,
  world_size INTEGER NOT NULL,
  iterations INTEGER NOT NULL,
  time_us REAL NOT NULL,
  algbw_gbps REAL NOT NULL,
  busbw_gbps REAL NOT NULL,
  PRIMARY KEY (trial_id, rank, idx)
) WITHOUT ROWID)",
};

// ---- version 5: investigation and autotune plans (core/investigate): the spec, its state, the result -
const char* const kVersion5[] = {
    R"(CREATE TABLE plans (
  id INTEGER PRIMARY KEY,
  kind TEXT NOT NULL,
  baseline_trial INTEGER,
  created_us INTEGER NOT NULL,
  state TEXT NOT NULL,
  spec TEXT NOT NULL,
  result TEXT NOT NULL DEFAULT ''
))",
};

// ---- version 6: kernel-sampled steps (Step::gpu_sampled, gpu_busy_ms; metrics/gpu_activity.h) -----
const char* const kVersion6[] = {
    R"(CREATE TABLE step_gpu (
  step_id INTEGER PRIMARY KEY REFERENCES steps(id) ON DELETE CASCADE,
  gpu_busy_ms REAL NOT NULL
))",
};

// ---- version 7: what the hardware says (issue 41): a memory-sampled step's live bytes by category
// (Step::memory_categories, metrics/memory_categories.h) and the NVML counters beyond the basic
// sample (GpuSample::counters: the energy counter, GPM activity) ---------------------------------
const char* const kVersion7[] = {
    R"(CREATE TABLE step_memory (
  step_id INTEGER PRIMARY KEY REFERENCES steps(id) ON DELETE CASCADE,
  phase TEXT NOT NULL,
  parameters_bytes INTEGER NOT NULL,
  gradients_bytes INTEGER NOT NULL,
  optimizer_bytes INTEGER NOT NULL,
  activations_bytes INTEGER NOT NULL,
  temporaries_bytes INTEGER NOT NULL,
  communication_bytes INTEGER NOT NULL,
  unattributed_bytes INTEGER NOT NULL,
  reserved_free_bytes INTEGER NOT NULL
))",
    R"(CREATE TABLE gpu_counters (
  sample_id INTEGER PRIMARY KEY REFERENCES gpu_samples(id) ON DELETE CASCADE,
  energy_mj INTEGER,
  sm_activity_pct REAL,
  sm_occupancy_pct REAL,
  tensor_activity_pct REAL
))",
};

// ---- version 8: a memory-sampled step's memory timeline (Step::memory_timeline): the allocator's
// allocated and reserved bytes at the start, peak and end of its forward, backward and optimizer --
const char* const kVersion8[] = {
    R"(CREATE TABLE step_memory_timeline (
  step_id INTEGER NOT NULL REFERENCES steps(id) ON DELETE CASCADE,
  idx INTEGER NOT NULL,
  phase TEXT NOT NULL,
  point TEXT NOT NULL,
  offset_us INTEGER,
  allocated_bytes INTEGER NOT NULL,
  reserved_bytes INTEGER NOT NULL,
  PRIMARY KEY (step_id, idx)
) WITHOUT ROWID)",
};

template <size_t N> void run_all(SQLite::Database& db, const char* const (&statements)[N]) {
  for (const char* sql : statements) db.exec(sql);
}

}  // namespace

void migrate(SQLite::Database& db, int from_version, int to_version) {
  SQLite::Transaction tx(db);
  if (from_version < 1 && to_version >= 1) {
    run_all(db, kVersion1);
    db.exec("PRAGMA application_id = " + std::to_string(kApplicationId));
  }
  if (from_version < 2 && to_version >= 2) run_all(db, kVersion2);
  if (from_version < 3 && to_version >= 3) run_all(db, kVersion3);
  if (from_version < 4 && to_version >= 4) run_all(db, kVersion4);
  if (from_version < 5 && to_version >= 5) run_all(db, kVersion5);
  if (from_version < 6 && to_version >= 6) run_all(db, kVersion6);
  if (from_version < 7 && to_version >= 7) run_all(db, kVersion7);
  if (from_version < 8 && to_version >= 8) run_all(db, kVersion8);
  // Integer formatted by us, not user input: PRAGMA takes no bound parameters.
  db.exec("PRAGMA user_version = " + std::to_string(to_version));
  tx.commit();
}

std::vector<SchemaObject> read_schema(SQLite::Database& db) {
  std::vector<SchemaObject> out;
  SQLite::Statement q(db, "SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name");
  while (q.executeStep()) {
    SchemaObject o;
    o.type = q.getColumn(0).getString();
    o.name = q.getColumn(1).getString();
    o.table = q.getColumn(2).getString();
    if (!q.getColumn(3).isNull()) o.sql = q.getColumn(3).getString();
    out.push_back(std::move(o));
  }
  return out;
}

const std::vector<SchemaObject>& expected_schema(int version) {
  static std::mutex mutex;
  static std::map<int, std::vector<SchemaObject>> cache;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = cache.find(version);
  if (it == cache.end()) {
    SQLite::Database db(":memory:", SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    migrate(db, 0, version);
    it = cache.emplace(version, read_schema(db)).first;
  }
  return it->second;
}

}  // namespace tunebench::store

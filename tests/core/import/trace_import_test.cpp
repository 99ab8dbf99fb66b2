// Traces into a session: one transaction (nothing half-written on any failure), the trial as the
// store loads it back, the analysis on it (the num_workers-0 trace is data-bound), and editing
// the known settings afterwards.
#include <gtest/gtest.h>

#include <SQLiteCpp/SQLiteCpp.h>

#include "core/analysis/compare.h"
#include "core/analysis/diagnosis.h"
#include "core/analysis/trial_metrics.h"
#include "core/import/trace_error.h"
#include "core/import/trace_import.h"
#include "core/store/event_log_import.h"
#include "core/store/session_store.h"
#include "tests/core/import/trace_test_support.h"
#include "tests/core/store/test_support.h"

namespace tunebench::import {
namespace {

using store::test::TempDir;
namespace t = test;

// Rows of every table of a session: what "nothing half-written" compares.
std::string row_counts(const std::string& path) {
  SQLite::Database db(path, SQLite::OPEN_READONLY);
  std::string out;
  SQLite::Statement tables(db, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name");
  while (tables.executeStep()) {
    const std::string name = tables.getColumn(0).getString();
    out += name + "=" + std::to_string(db.execAndGet("SELECT count(*) FROM \"" + name + "\"").getInt64()) + " ";
  }
  return out;
}

analysis::TrialMetrics metrics_of(store::SessionStore& s, int64_t id) {
  return analysis::analyze(s.load_trial(id).log);
}

TEST(TraceImport, DdpTraceBecomesAStoredTrialWithTwoRanks) {
  TempDir dir;
  auto s = store::SessionStore::create(dir.file("s.tbsession"), "s");
  const TraceImportResult r = import_torch_traces(s, t::trace_files("ddp-nw4"));
  EXPECT_EQ(r.ranks, 2);
  EXPECT_EQ(r.world_size, 2);
  EXPECT_EQ(r.steps, 4);  // per rank, the figure shown everywhere (8 step records)
  EXPECT_NE(r.name.find("(imported trace, 2 ranks)"), std::string::npos) << r.name;
  EXPECT_FALSE(r.unknown_knobs.empty());
  const auto info = s.trial(r.trial_id);
  EXPECT_EQ(info.status, protocol::TrialStatus::Done);
  EXPECT_EQ(info.source.rfind("import: torch.profiler rank0.", 0), 0u) << info.source;
  EXPECT_EQ(info.config["strategy"], "ddp");
  EXPECT_EQ(info.step_count, 8);
  const auto env = s.trial_environment(r.trial_id);
  ASSERT_EQ(env.size(), 2u);
  EXPECT_EQ(env.at(1).device, "NVIDIA H200");
  EXPECT_EQ(env.at(1).nccl, "2.28.9");
  const auto loaded = s.load_trial(r.trial_id);
  EXPECT_EQ(loaded.log.ranks.at(0).steps.size(), 4u);
  EXPECT_EQ(loaded.log.ranks.at(1).logs.size(), 1u);

  const auto m = analysis::analyze(loaded.log);
  EXPECT_EQ(m.world_size, 2);
  EXPECT_EQ(m.measured_steps, 4);
  EXPECT_TRUE(m.has_comm());
  ASSERT_TRUE(m.busbw_gbps);
  EXPECT_GT(*m.busbw_gbps, 1.0);
  EXPECT_EQ(m.grad_bytes_per_step, t::meta("ddp-nw4")["gradient_bytes_fp32"].get<int64_t>());
  ASSERT_TRUE(m.comm_floor_ms);
  EXPECT_GT(*m.comm_floor_ms, 0.0);
  EXPECT_FALSE(m.mfu);  // tokens and model size are unknown
  EXPECT_EQ(m.tokens_per_step, 0.0);
}

TEST(TraceImport, NumWorkersZeroIsDiagnosedDataBoundAndFourIsNot) {
  TempDir dir;
  auto s = store::SessionStore::create(dir.file("s.tbsession"), "s");
  const auto nw0 = import_torch_traces(s, t::trace_files("single-nw0"));
  const auto nw4 = import_torch_traces(s, t::trace_files("single-nw4"));
  const auto d0 = analysis::diagnose(metrics_of(s, nw0.trial_id));
  ASSERT_FALSE(d0.findings.empty());
  EXPECT_EQ(d0.findings.front().kind, analysis::FindingKind::DataBound) << d0.verdict;
  EXPECT_GT(d0.findings.front().share, 0.4);
  // num_workers 0 is known from the trace (_SingleProcessDataLoaderIter): the suggestion is concrete.
  ASSERT_FALSE(d0.findings.front().suggestions.empty());
  EXPECT_EQ(d0.findings.front().suggestions.front().title, "num_workers 4");
  const auto d4 = analysis::diagnose(metrics_of(s, nw4.trial_id));
  for (const auto& f : d4.findings) EXPECT_NE(f.kind, analysis::FindingKind::DataBound) << f.title;

  // The two compared: the config diff names the one knob the traces show differently.
  const auto c = analysis::compare({metrics_of(s, nw0.trial_id), metrics_of(s, nw4.trial_id)});
  ASSERT_FALSE(c.config_diff.empty());
  bool workers = false;
  for (const auto& d : c.config_diff)
    if (d.key == "num_workers") {
      workers = true;
      EXPECT_EQ(d.values, (std::vector<std::string>{"0", "unknown"}));
    }
  EXPECT_TRUE(workers);
}

TEST(TraceImport, FailuresWriteNothing) {
  TempDir dir;
  const std::string path = dir.file("s.tbsession");
  {
    auto s = store::SessionStore::create(path, "s");
    import_torch_traces(s, t::trace_files("single-nw4"));
  }
  const std::string before = row_counts(path);
  const std::string bytes = store::test::read_bytes(t::trace_files("ddp-nw4")[1]);
  store::test::write_bytes(dir.file("rank1-cut.json.gz"), bytes.substr(0, bytes.size() - 1000));
  auto s = store::SessionStore::open(path);
  // A truncated second rank, a cancel half-way, a bad setting, a mismatched pair.
  EXPECT_THROW(import_torch_traces(s, {t::trace_files("ddp-nw4")[0], dir.file("rank1-cut.json.gz")}), TraceError);
  TraceImportOptions cancel;
  cancel.progress = [](int64_t done, int64_t total) { return done < total / 2; };
  EXPECT_THROW(import_torch_traces(s, t::trace_files("ddp-nw4"), cancel), TraceError);
  TraceImportOptions bad;
  bad.settings = {"num_workers=-1"};
  EXPECT_THROW(import_torch_traces(s, t::trace_files("ddp-nw4"), bad), TraceError);
  EXPECT_THROW(import_torch_traces(s, {t::trace_files("ddp-nw4")[0], t::trace_files("fsdp2-nw4")[1]}), TraceError);
  EXPECT_EQ(s.list_trials().size(), 1u);
  EXPECT_EQ(row_counts(path), before);
}

TEST(TraceImport, KnownSettingsCanBeFilledInLater) {
  TempDir dir;
  auto s = store::SessionStore::create(dir.file("s.tbsession"), "s");
  const auto r = import_torch_traces(s, t::trace_files("single-nw4"));
  EXPECT_EQ(metrics_of(s, r.trial_id).tokens_per_step, 0.0);
  // Two of the three knobs tokens need: still unknown.
  edit_known_settings(s, r.trial_id, {"micro_batch=8", "seq_len=512"});
  EXPECT_EQ(metrics_of(s, r.trial_id).tokens_per_step, 0.0);
  const auto config = edit_known_settings(s, r.trial_id, {"grad_accum=1"});
  EXPECT_EQ(config["micro_batch"], 8);
  const auto m = metrics_of(s, r.trial_id);
  EXPECT_EQ(m.tokens_per_step, 8 * 512);
  EXPECT_GT(m.tokens_per_s_total.median, 100000.0);  // 4096 tokens in ~20 ms
  EXPECT_EQ(s.trial(r.trial_id).config["seq_len"], 512);
  EXPECT_EQ(s.trial_environment(r.trial_id).at(0).config["seq_len"], 512);
  // Forgetting makes a knob unknown again.
  edit_known_settings(s, r.trial_id, {}, {"grad_accum"});
  EXPECT_EQ(metrics_of(s, r.trial_id).tokens_per_step, 0.0);

  // A bad value changes nothing.
  const auto before = s.trial(r.trial_id).config;
  EXPECT_THROW(edit_known_settings(s, r.trial_id, {"micro_batch=16", "num_workers=lots"}), TraceError);
  EXPECT_EQ(s.trial(r.trial_id).config, before);

  // A native trial ran with its config: nothing to fill in.
  const auto native = store::import_event_log(s, std::string(TUNEBENCH_TEST_DATA_DIR) + "/analysis/forum_single.jsonl");
  try {
    edit_known_settings(s, native.trial_id, {"micro_batch=2"});
    ADD_FAILURE() << "a native trial's settings were edited";
  } catch (const TraceError& e) {
    EXPECT_NE(std::string(e.what()).find("ran with a complete configuration"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tunebench::import

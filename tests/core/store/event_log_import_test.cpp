// Importing worker event logs (.jsonl): logs written with the protocol's own writer, logs with
// garbage lines, and every recorded log under tests/data/.
#include <gtest/gtest.h>

#include <filesystem>

#include "core/protocol/event_writer.h"
#include "core/store/event_log_import.h"
#include "core/store/session_store.h"
#include "core/store/store_error.h"
#include "core/store/trial_writer.h"
#include "tests/core/store/test_support.h"

namespace ts = tunebench::store;
namespace tt = tunebench::store::test;
namespace tp = tunebench::protocol;

namespace {

void write_log(const std::string& path, const std::vector<tp::Event>& events) {
  tp::EventWriter writer(tp::open_line_sink("file:" + path));
  for (const auto& e : events) writer.write(e);
}

}  // namespace

TEST(EventLogImport, WorkerLogBecomesATrial) {
  tt::TempDir dir;
  const auto session = dir.file("s.tbsession");
  const auto log_path = dir.file("rank-logs.jsonl");
  auto events = tt::full_trial(2, 6);
  // Drop the error so the run ended well.
  events.erase(std::remove_if(events.begin(), events.end(),
                              [](const tp::Event& e) { return e.is<tp::Error>(); }),
               events.end());
  write_log(log_path, events);
  auto store = ts::SessionStore::create(session, "s");
  const auto result = ts::import_event_log(store, log_path);
  EXPECT_EQ(result.events, static_cast<int64_t>(events.size()));
  EXPECT_EQ(result.problems, 0);

  const auto t = store.load_trial(result.trial_id);
  EXPECT_EQ(t.info.name, "run-1");
  EXPECT_EQ(t.info.status, ts::TrialStatus::Done);
  EXPECT_EQ(t.info.source, "import: rank-logs.jsonl");
  EXPECT_EQ(t.info.config["strategy"], "ddp");
  EXPECT_TRUE(t.info.start_us && t.info.end_us && *t.info.start_us < *t.info.end_us);
  EXPECT_EQ(tt::canonical(t.log), tt::canonical(tp::read_trial_log_file(log_path)));
  EXPECT_EQ(t.log.ranks.at(1).steps.size(), 6u);
}

TEST(EventLogImport, LinkProbeKeepsItsPointsWithTheEnvironment) {
  tt::TempDir dir;
  const auto log_path = dir.file("probe.jsonl");
  std::vector<tp::Event> events;
  // One run: the probe points carry the hello's trial id (a log holding two ids is two trials).
  const std::string trial = tt::hello_event(0, 2).header.trial;
  for (int rank = 0; rank < 2; ++rank) {
    events.push_back(tt::hello_event(rank, 2));
    for (int i = 0; i < 3; ++i) {
      tp::LinkProbe p;
      p.bytes = int64_t{1} << (20 + i);
      p.world_size = 2;
      p.iterations = 10 + i;
      p.time_us = 100.0 * (i + 1) + rank;
      p.algbw_gbps = p.bytes / (p.time_us * 1e-6) / 1e9;
      p.busbw_gbps = p.algbw_gbps;
      events.push_back(tp::Event{{tp::kSchemaVersion, trial, rank, 1000 + i}, p});
    }
    events.push_back(tt::done_event(rank));
  }
  write_log(log_path, events);
  auto store = ts::SessionStore::create(dir.file("s.tbsession"), "s");
  const auto result = ts::import_event_log(store, log_path);
  EXPECT_EQ(result.problems, 0);
  const auto t = store.load_trial(result.trial_id);
  ASSERT_EQ(t.log.ranks.at(1).probes.size(), 3u);
  EXPECT_EQ(t.log.ranks.at(1).probes[2].bytes, int64_t{1} << 22);
  EXPECT_DOUBLE_EQ(t.log.ranks.at(1).probes[2].time_us, 301.0);
  EXPECT_EQ(tt::canonical(t.log), tt::canonical(tp::read_trial_log_file(log_path)));
}

TEST(EventLogImport, BadLinesAreCountedAndKept) {
  tt::TempDir dir;
  const auto log_path = dir.file("noisy.jsonl");
  std::string text;
  auto events = tt::full_trial(1, 3);
  events.pop_back();  // no done: the run was cut off
  for (size_t i = 0; i < events.size(); ++i) {
    text += tp::format_line(events[i]);
    if (i == 2) text += "NCCL INFO Bootstrap : Using eth0\n";
    if (i == 4) text += "{\"v\":1,\"type\":\"step\",\"rank\":\"zero\"}\n";
  }
  text += "{\"v\":1,\"type\":\"st";  // truncated last line
  tt::write_bytes(log_path, text);

  auto store = ts::SessionStore::create(dir.file("s.tbsession"), "s");
  const auto result = ts::import_event_log(store, log_path, "cut off");
  EXPECT_EQ(result.problems, 3);
  EXPECT_EQ(result.problem_list.size(), 3u);
  EXPECT_EQ(result.problem_list[0].line_number, 4);
  const auto t = store.load_trial(result.trial_id);
  EXPECT_EQ(t.info.name, "cut off");
  EXPECT_EQ(t.info.status, ts::TrialStatus::Failed);  // the log has an error event
  EXPECT_EQ(t.log.problems.size(), 3u);
  EXPECT_EQ(t.log.problems[0].excerpt, "NCCL INFO Bootstrap : Using eth0");
  EXPECT_EQ(t.log.ranks.at(0).steps.size(), 3u);
}

TEST(EventLogImport, NotAnEventLog) {
  tt::TempDir dir;
  auto store = ts::SessionStore::create(dir.file("s.tbsession"), "s");
  EXPECT_THROW(ts::import_event_log(store, dir.file("missing.jsonl")), ts::StoreError);
  tt::write_bytes(dir.file("notes.txt"), "just some text\nnothing else\n");
  EXPECT_THROW(ts::import_event_log(store, dir.file("notes.txt")), ts::StoreError);
  EXPECT_TRUE(store.list_trials().empty());  // a failed import leaves no trial behind
}

TEST(EventLogImport, DeeplyNestedJsonIsRefusedNotACrash) {
  tt::TempDir dir;
  const auto log_path = dir.file("deep.jsonl");
  std::string deep = tp::format_line(tt::step_event(0, 0));
  deep += R"({"v":1,"type":"hello","rank":0,"t_us":1,"config":)";
  for (int i = 0; i < 600000; ++i) deep += R"({"a":)";
  deep += "1" + std::string(600001, '}') + "\n";
  tt::write_bytes(log_path, deep);
  auto store = ts::SessionStore::create(dir.file("s.tbsession"), "s");
  try {
    ts::import_event_log(store, log_path);
    ADD_FAILURE() << "imported a log with 600000 nested objects";
  } catch (const ts::StoreError& e) {
    EXPECT_NE(std::string(e.what()).find("line 2 nests JSON"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(store.list_trials().empty());
}

// Recorded logs (GPU runs, CPU runs) checked into tests/data/ import without losing a record
// (tests/data/probes holds kernel and GEMM measurements, not event logs).
TEST(EventLogImport, RecordedLogs) {
  namespace fs = std::filesystem;
  const fs::path data(TUNEBENCH_TEST_DATA_DIR);
  std::vector<fs::path> logs;
  if (fs::exists(data))
    for (const auto& entry : fs::recursive_directory_iterator(data))
      if (entry.path().extension() == ".jsonl" && entry.path().parent_path().filename() != "probes")
        logs.push_back(entry.path());
  if (logs.empty()) GTEST_SKIP() << "no recorded event logs under " << data;
  tt::TempDir dir;
  auto store = ts::SessionStore::create(dir.file("recorded.tbsession"), "recorded");
  for (const auto& path : logs) {
    SCOPED_TRACE(path.string());
    const auto direct = tp::read_trial_log_file(path.string());
    const auto result = ts::import_event_log(store, path.string());
    const auto loaded = store.load_trial(result.trial_id);
    EXPECT_EQ(tt::canonical(loaded.log), tt::canonical(direct));
  }
}

// Trials carried from another session (a report's copy) keep their metadata; one transaction.
TEST(LoadedTrialsImport, TrialsComeOverWithTheirMetadataOrNotAtAll) {
  tt::TempDir dir;
  const std::string from = dir.file("from.tbsession");
  const int64_t id = ts::SessionStore::create(from, "from")
                         .add_trial("measured", {{"strategy", "ddp"}, {"world_size", 2}}, ts::TrialStatus::Queued, "live");
  {
    ts::TrialWriter w(from, id);
    for (const auto& e : tt::full_trial(2, 4)) w.add(e);
    w.finish(ts::TrialStatus::Stopped, "stopped by the user");
  }
  {
    auto s = ts::SessionStore::open(from);
    s.set_trial_notes(id, "notes\nwith two lines");
    s.set_trial_tags(id, {"sweep:1", "baseline"});
    s.add_trial("queued", nlohmann::json::object(), ts::TrialStatus::Queued);
  }
  std::vector<ts::LoadedTrial> trials;
  {
    auto s = ts::SessionStore::open(from, {ts::SessionStore::Mode::ReadOnly});
    for (const auto& t : s.list_trials()) trials.push_back(s.load_trial(t.id));
  }
  ASSERT_EQ(trials.size(), 2u);
  trials[1].info.status = ts::TrialStatus::Running;  // as another session's live trial reads
  auto to = ts::SessionStore::create(dir.file("to.tbsession"), "to");
  const auto result = ts::import_loaded_trials(to, trials, "report: r.html");
  ASSERT_EQ(result.trial_ids.size(), 2u);
  const auto a = to.load_trial(result.trial_ids[0]);
  EXPECT_EQ(tt::canonical(a.log), tt::canonical(trials[0].log));
  EXPECT_EQ(a.info.name, "measured");
  EXPECT_EQ(a.info.notes, "notes\nwith two lines");
  EXPECT_EQ(a.info.tags, (std::vector<std::string>{"baseline", "sweep:1"}));
  EXPECT_EQ(a.info.status, ts::TrialStatus::Stopped);
  EXPECT_EQ(a.info.exit_reason, "stopped by the user");
  EXPECT_EQ(a.info.source, "report: r.html");
  EXPECT_EQ(a.info.created_us, trials[0].info.created_us);
  // No writer owns it here: a running trial comes over interrupted.
  EXPECT_EQ(to.trial(result.trial_ids[1]).status, ts::TrialStatus::Interrupted);
  // Empty source: each keeps its own. A trial that cannot be written leaves nothing behind.
  EXPECT_EQ(to.load_trial(ts::import_loaded_trials(to, {trials[0]}, "").trial_id).info.source, "live");
  auto bad = trials[0];
  bad.info.tags.assign(65, "");
  for (size_t i = 0; i < bad.info.tags.size(); ++i) bad.info.tags[i] = "t" + std::to_string(i);
  const size_t before = to.list_trials().size();
  EXPECT_THROW(ts::import_loaded_trials(to, {trials[0], bad}, "x"), ts::StoreError);
  EXPECT_EQ(to.list_trials().size(), before);
}

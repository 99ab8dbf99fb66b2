// Exports: the Chrome trace parsed back and checked event by event, CSV tables counted and
// guarded against formula injection, JSON with summaries and steps.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include "core/analysis/trial_metrics.h"
#include "core/report/export.h"
#include "core/store/export.h"
#include "core/store/store_error.h"
#include "tests/core/store/test_support.h"

namespace ts = tunebench::store;
namespace trp = tunebench::report;
namespace tt = tunebench::store::test;
namespace tp = tunebench::protocol;
using nlohmann::json;

namespace {

ts::LoadedTrial sample_trial(int ranks, int steps) {
  ts::LoadedTrial t;
  t.info.id = 7;
  t.info.name = "ddp 2x";
  t.info.status = ts::TrialStatus::Done;
  t.info.config = {{"strategy", "ddp"}};
  t.log = tt::log_of(tt::full_trial(ranks, steps));
  return t;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

}  // namespace

TEST(ChromeTrace, OneProcessPerRankOneThreadPerLane) {
  const auto trial = sample_trial(2, 5);
  // Through text and back, as Perfetto would read it.
  const json trace = json::parse(ts::chrome_trace(trial).dump());
  ASSERT_TRUE(trace.contains("traceEvents"));
  const auto& events = trace["traceEvents"];

  size_t complete = 0;
  std::map<int, std::string> process_names;
  std::map<std::pair<int, int>, std::string> thread_names;
  std::map<std::pair<int, int>, size_t> per_thread;
  for (const auto& e : events) {
    ASSERT_TRUE(e.contains("ph") && e.contains("pid") && e.contains("name")) << e.dump();
    const int pid = e["pid"].get<int>();
    if (e["ph"] == "M") {
      if (e["name"] == "process_name") process_names[pid] = e["args"]["name"];
      if (e["name"] == "thread_name") thread_names[{pid, e["tid"].get<int>()}] = e["args"]["name"];
      continue;
    }
    ASSERT_EQ(e["ph"], "X") << e.dump();
    ASSERT_TRUE(e.contains("tid") && e.contains("ts") && e.contains("dur")) << e.dump();
    ASSERT_TRUE(e["ts"].is_number() && e["dur"].is_number());
    EXPECT_GE(e["ts"].get<double>(), 0.0);
    EXPECT_GE(e["dur"].get<double>(), 0.0);
    ++complete;
    ++per_thread[{pid, e["tid"].get<int>()}];
    if (e["cat"] == "comm") {
      EXPECT_GT(e["args"]["bytes"].get<int64_t>(), 0);
      EXPECT_GT(e["args"]["busbw_gbps"].get<double>(), 0.0);
      EXPECT_TRUE(e["args"].contains("label"));
    }
  }
  EXPECT_EQ(complete, 2u * 5u * 6u);  // ranks x steps x intervals per step
  EXPECT_EQ(process_names, (std::map<int, std::string>{{0, "rank 0"}, {1, "rank 1"}}));
  for (int rank : {0, 1}) {
    EXPECT_EQ((thread_names[{rank, 1}]), "host");
    EXPECT_EQ((thread_names[{rank, 2}]), "compute");
    EXPECT_EQ((thread_names[{rank, 3}]), "comm");
    EXPECT_EQ((per_thread[{rank, 1}]), 5u);      // data wait
    EXPECT_EQ((per_thread[{rank, 2}]), 5u * 3);  // forward, backward, optimizer
    EXPECT_EQ((per_thread[{rank, 3}]), 5u * 2);  // two buckets
  }
}

TEST(ChromeTrace, TimesAreMicrosecondsOnRankZerosClock) {
  const auto trial = sample_trial(2, 1);
  const json trace = ts::chrome_trace(trial);
  // Rank 1's clock runs 17 us behind (clock_offset_us = 17): its data wait starts at +17.
  std::map<int, double> first_ts;
  for (const auto& e : trace["traceEvents"])
    if (e["ph"] == "X" && e["cat"] == "host") first_ts[e["pid"].get<int>()] = e["ts"].get<double>();
  EXPECT_EQ(first_ts[0], 0.0);
  EXPECT_EQ(first_ts[1], 17.0);
  for (const auto& e : trace["traceEvents"])
    if (e["ph"] == "X" && e["name"] == "forward") {
      EXPECT_EQ(e["dur"].get<double>(), 29'400.0);
    }
}

TEST(CsvExport, StepsAndSummaries) {
  std::vector<ts::LoadedTrial> trials = {sample_trial(2, 4), sample_trial(1, 3)};
  trials[1].info.id = 8;
  trials[1].info.name = "=HYPERLINK(\"http://evil\"), \"quoted\"";
  std::ostringstream steps, summaries;
  ts::write_steps_csv(trials, steps);
  ts::write_summaries_csv(trials, {}, summaries);
  const auto step_lines = lines_of(steps.str());
  ASSERT_EQ(step_lines.size(), 1u + 2 * 4 + 3);
  EXPECT_EQ(step_lines[0].substr(0, 22), "trial_id,trial_name,ra");
  EXPECT_EQ(step_lines[1].substr(0, 16), "7,ddp 2x,0,0,1,1");
  const auto summary_lines = lines_of(summaries.str());
  ASSERT_EQ(summary_lines.size(), 1u + 2 + 1);
  // The hostile name is quoted and cannot start a formula.
  const std::string hostile_row = "8,\"'=HYPERLINK(\"\"http://evil\"\"), \"\"quoted\"\"\",done,";
  EXPECT_EQ(summary_lines[3].substr(0, hostile_row.size()), hostile_row);
  // Every row has as many cells as the header (no quoted commas counted).
  EXPECT_EQ(std::count(summary_lines[1].begin(), summary_lines[1].end(), ','),
            std::count(summary_lines[0].begin(), summary_lines[0].end(), ','));
}

TEST(JsonExport, SummariesAndSteps) {
  const json j = json::parse(ts::trials_to_json({sample_trial(2, 4)}, {}).dump());
  EXPECT_EQ(j["format"], "tunebench-trials");
  ASSERT_EQ(j["trials"].size(), 1u);
  const auto& t = j["trials"][0];
  EXPECT_EQ(t["name"], "ddp 2x");
  EXPECT_EQ(t["status"], "done");
  EXPECT_EQ(t["world_size"], 2);
  ASSERT_EQ(t["ranks"].size(), 2u);
  EXPECT_EQ(t["ranks"][1]["steps"].size(), 4u);
  EXPECT_EQ(t["ranks"][1]["steps"][2]["step_ms"], 95.001);
  EXPECT_EQ(t["ranks"][0]["summary"]["step_ms_median"], 95.5);
  EXPECT_EQ(t["ranks"][0]["environment"]["nccl"], "2.28.3");
}

// Issue 15 item 9: an unknown MFU (the worker's -1) is an empty cell and null, never -1.0.
TEST(CsvExport, UnknownMfuIsEmptyNotMinusOne) {
  ts::LoadedTrial t = sample_trial(1, 3);
  for (auto& [rank, r] : t.log.ranks)
    if (r.done) r.done->summary.mfu = -1.0;
  std::ostringstream summaries;
  ts::write_summaries_csv({t}, {trp::trial_figures(t)}, summaries);
  const auto lines = lines_of(summaries.str());
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[1].find("-1"), std::string::npos) << lines[1];
  const json j = json::parse(ts::trials_to_json({t}, {trp::trial_figures(t)}).dump());
  EXPECT_TRUE(j["trials"][0]["ranks"][0]["summary"]["mfu"].is_null());
}

TEST(ChromeTrace, SeveralTrialsStackAsOneProcessPerTrialAndRank) {
  std::vector<ts::LoadedTrial> trials = {sample_trial(2, 3), sample_trial(1, 2)};
  trials[1].info.id = 9;
  trials[1].info.name = "single";
  const json trace = json::parse(ts::chrome_trace(trials).dump());
  std::map<int, std::string> names;
  std::map<int, int> sort_index;
  std::map<int, size_t> complete;
  for (const auto& e : trace["traceEvents"]) {
    const int pid = e["pid"].get<int>();
    if (e["ph"] == "X") ++complete[pid];
    if (e["ph"] == "M" && e["name"] == "process_name") names[pid] = e["args"]["name"];
    if (e["ph"] == "M" && e["name"] == "process_sort_index") sort_index[pid] = e["args"]["sort_index"].get<int>();
  }
  EXPECT_EQ(names, (std::map<int, std::string>{
                       {0, "ddp 2x \u00b7 rank 0"}, {1, "ddp 2x \u00b7 rank 1"}, {1000, "single \u00b7 rank 0"}}));
  EXPECT_EQ(sort_index, (std::map<int, int>{{0, 0}, {1, 1}, {1000, 1000}}));  // one per process, in order
  EXPECT_EQ(complete, (std::map<int, size_t>{{0, 3u * 6}, {1, 3u * 6}, {1000, 2u * 6}}));
  EXPECT_EQ(trace["otherData"]["trial_ids"], json({7, 9}));
  // One trial is exactly its own trace.
  EXPECT_EQ(ts::chrome_trace(std::vector<ts::LoadedTrial>{trials[0]}), ts::chrome_trace(trials[0]));
}

// The GUI's and the CLI's exporter (report::export_trials) is the store's writer of each format,
// with the trials' figures computed above the store.
TEST(ExportTrials, EachFormatIsItsWriter) {
  const std::vector<ts::LoadedTrial> trials = {sample_trial(2, 3)};
  const std::vector<ts::TrialFigures> figures = {trp::trial_figures(trials[0])};
  for (const auto& f : ts::export_formats()) {
    ASSERT_EQ(ts::export_format_from_name(f.name), f.format) << f.name;
    EXPECT_EQ(ts::export_format_info(f.format).name, f.name);
    std::ostringstream via, direct;
    trp::export_trials(trials, f.format, via);
    switch (f.format) {
      case ts::ExportFormat::StepsCsv:
        ts::write_steps_csv(trials, direct);
        break;
      case ts::ExportFormat::SummariesCsv:
        ts::write_summaries_csv(trials, figures, direct);
        break;
      case ts::ExportFormat::Json:
        direct << ts::trials_to_json(trials, figures).dump(1) << '\n';
        break;
      case ts::ExportFormat::ChromeTrace:
        direct << ts::chrome_trace(trials).dump() << '\n';
        break;
    }
    EXPECT_EQ(via.str(), direct.str()) << f.name;
  }
  EXPECT_EQ(ts::export_formats().size(), 4u);
  EXPECT_FALSE(ts::export_format_from_name("xlsx"));
}

// Text that did not pass the store's UTF-8 repair (a hand-built or imported trial) must not make
// the JSON formats throw: the GUI's export did, the CLI's did not; both now share one writer.
TEST(ExportTrials, InvalidUtf8IsReplacedNotThrown) {
  ts::LoadedTrial t = sample_trial(1, 1);
  t.info.name = "bad \xff\xfe name";
  t.info.exit_reason = "cut \xe2\x82";
  for (auto format : {ts::ExportFormat::Json, ts::ExportFormat::ChromeTrace}) {
    std::ostringstream out;
    ASSERT_NO_THROW(trp::export_trials({t, sample_trial(1, 1)}, format, out));
    const json back = json::parse(out.str());  // valid UTF-8 now
    EXPECT_NE(out.str().find("bad \xef\xbf\xbd"), std::string::npos) << out.str().substr(0, 200);
  }
}

TEST(ExportTrials, AFailedStreamIsAStoreError) {
  std::ostringstream out;
  out.setstate(std::ios::badbit);
  EXPECT_THROW(trp::export_trials({sample_trial(1, 1)}, ts::ExportFormat::StepsCsv, out), ts::StoreError);
}

// A trial's communication read one figure in the comparison and another per rank in the
// CSV. The exports (report::export_trials, the GUI's and the CLI's) carry the analysis' own trial
// figures beside each rank's.
TEST(CsvExport, TheTrialsFiguresAreTheAnalysisOwn) {
  const ts::LoadedTrial t = sample_trial(2, 6);
  const auto m = tunebench::analysis::analyze(t.log);
  std::ostringstream summaries;
  trp::export_trials({t}, ts::ExportFormat::SummariesCsv, summaries);
  const auto lines = lines_of(summaries.str());
  ASSERT_EQ(lines.size(), 3u);
  auto cells = [](const std::string& line) {
    std::vector<std::string> out;
    std::string cell;
    std::istringstream in(line);
    while (std::getline(in, cell, ',')) out.push_back(cell);
    return out;
  };
  const auto header = cells(lines[0]);
  const auto row = cells(lines[1]);
  auto column = [&](const std::string& name) -> double {
    const auto it = std::find(header.begin(), header.end(), name);
    EXPECT_NE(it, header.end()) << name << " missing from " << lines[0];
    return it == header.end() ? -1 : std::stod(row.at(size_t(it - header.begin())));
  };
  EXPECT_DOUBLE_EQ(column("trial_step_ms"), m.step_ms.median);
  EXPECT_DOUBLE_EQ(column("trial_tokens_per_s"), m.tokens_per_s_total.median);
  EXPECT_DOUBLE_EQ(column("trial_comm_ms"), m.comm_ms.median);
  EXPECT_DOUBLE_EQ(column("trial_exposed_comm_ms"), m.exposed_comm_ms.median);
  std::ostringstream json_text;
  trp::export_trials({t}, ts::ExportFormat::Json, json_text);
  const json j = json::parse(json_text.str());
  ASSERT_TRUE(j["trials"][0].contains("metrics"));
  EXPECT_DOUBLE_EQ(j["trials"][0]["metrics"]["comm_ms"].get<double>(), m.comm_ms.median);
  EXPECT_DOUBLE_EQ(j["trials"][0]["metrics"]["tokens_per_s_total"].get<double>(), m.tokens_per_s_total.median);
}

// Issue 41: a kernel-sampled step's GPU busy and a memory-sampled step's categories reach the steps
// table and the JSON by name (not under a stray "-" key), blank and absent on the other steps; the
// trial's energy figures are the analysis' own.
TEST(Export, SampledStepsKeepTheirGpuBusyAndMemoryCategories) {
  ts::LoadedTrial t = sample_trial(1, 3);
  auto& steps = t.log.ranks.at(0).steps;
  steps[1].gpu_sampled = true;
  steps[1].gpu_busy_ms = 81.25;
  steps[2].memory_sampled = true;
  steps[2].memory_categories = {"backward", 100, 200, 400, 800, 16, 0, 32, 64};
  std::ostringstream csv;
  ts::write_steps_csv({t}, csv);
  const auto lines = lines_of(csv.str());
  ASSERT_EQ(lines.size(), 4u);
  const std::string tail = ",gpu_busy_ms,memory_phase,parameters_bytes,gradients_bytes,optimizer_bytes,"
                           "activations_bytes,temporaries_bytes,communication_bytes,unattributed_bytes,"
                           "reserved_free_bytes";
  ASSERT_GE(lines[0].size(), tail.size());
  EXPECT_EQ(lines[0].substr(lines[0].size() - tail.size()), tail);
  for (const auto& line : lines)
    EXPECT_EQ(std::count(line.begin(), line.end(), ','), std::count(lines[0].begin(), lines[0].end(), ',')) << line;
  EXPECT_EQ(lines[1].substr(lines[1].size() - 10), std::string(10, ','));
  EXPECT_EQ(lines[2].substr(lines[2].size() - 15), ",81.25" + std::string(9, ','));
  const std::string categories = ",,backward,100,200,400,800,16,0,32,64";
  EXPECT_EQ(lines[3].substr(lines[3].size() - categories.size()), categories);

  const json j = json::parse(ts::trials_to_json({t}, {}).dump());
  const auto& js = j["trials"][0]["ranks"][0]["steps"];
  for (const auto& s : js) EXPECT_FALSE(s.contains("-")) << s.dump();
  EXPECT_FALSE(js[0].contains("gpu_busy_ms"));
  EXPECT_FALSE(js[0].contains("memory_categories"));
  EXPECT_EQ(js[1]["gpu_busy_ms"], 81.25);
  EXPECT_EQ(js[2]["memory_categories"]["phase"], "backward");
  EXPECT_EQ(js[2]["memory_categories"]["activations_bytes"], 800);

  ts::TrialFigures energy;
  energy.joules_per_step = 12.5;
  energy.tokens_per_joule = 93.1;
  std::ostringstream summaries;
  ts::write_summaries_csv({t}, {energy}, summaries);
  const auto rows = lines_of(summaries.str());
  EXPECT_NE(rows[0].find(",trial_joules_per_step,trial_tokens_per_joule"), std::string::npos) << rows[0];
  EXPECT_EQ(rows[1].substr(rows[1].size() - 10), ",12.5,93.1");
  EXPECT_EQ(json::parse(ts::trials_to_json({t}, {energy}).dump())["trials"][0]["metrics"]["tokens_per_joule"], 93.1);
}
